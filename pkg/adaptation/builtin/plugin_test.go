package builtin

import (
	"context"
	"errors"
	"testing"

	"github.com/nri-handover/nri/api"
)

func TestConfigureDerivesEventsFromHandlers(t *testing.T) {
	b := &BuiltinPlugin{Index: "00", Base: "b", Handlers: BuiltinHandlers{
		RunPodSandbox:               func(context.Context, *api.RunPodSandboxRequest) error { return nil },
		ValidateContainerAdjustment: func(context.Context, *api.ValidateContainerAdjustmentRequest) error { return nil },
	}}
	rpl, err := b.Configure(context.Background(), &api.ConfigureRequest{})
	if err != nil {
		t.Fatal(err)
	}
	m := api.EventMask(rpl.Events)
	if !m.IsSet(api.Event_RUN_POD_SANDBOX) || !m.IsSet(api.Event_VALIDATE_CONTAINER_ADJUSTMENT) || m.IsSet(api.Event_CREATE_CONTAINER) {
		t.Fatalf("events %s", m.PrettyString())
	}
}

func TestConfigureHandlerMaskWins(t *testing.T) {
	b := &BuiltinPlugin{Handlers: BuiltinHandlers{
		Configure: func(context.Context, *api.ConfigureRequest) (*api.ConfigureResponse, error) {
			return &api.ConfigureResponse{Events: int32(api.ValidEvents)}, nil
		},
	}}
	rpl, err := b.Configure(context.Background(), &api.ConfigureRequest{})
	if err != nil || api.EventMask(rpl.Events) != api.ValidEvents {
		t.Fatalf("got %v, %v", rpl, err)
	}
}

func TestValidatorErrorBecomesRejection(t *testing.T) {
	b := &BuiltinPlugin{Handlers: BuiltinHandlers{
		ValidateContainerAdjustment: func(context.Context, *api.ValidateContainerAdjustmentRequest) error {
			return errors.New("no")
		},
	}}
	rpl, err := b.ValidateContainerAdjustment(context.Background(), &api.ValidateContainerAdjustmentRequest{})
	if err != nil || !rpl.Reject || rpl.Reason != "no" {
		t.Fatalf("got %v, %v", rpl, err)
	}
}

func TestHandlerErrorsPropagate(t *testing.T) {
	b := &BuiltinPlugin{Handlers: BuiltinHandlers{
		StopPodSandbox: func(context.Context, *api.StopPodSandboxRequest) error { return errors.New("boom") },
	}}
	if _, err := b.StopPodSandbox(context.Background(), &api.StopPodSandboxRequest{}); err == nil {
		t.Fatal("handler error lost")
	}
	if rpl, err := b.RemovePodSandbox(context.Background(), &api.RemovePodSandboxRequest{}); err != nil || rpl == nil {
		t.Fatalf("missing handler: %v, %v", rpl, err)
	}
}
