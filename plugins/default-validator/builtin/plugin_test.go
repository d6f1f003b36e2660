package builtin

import (
	"context"
	"errors"
	"testing"

	"github.com/nri-handover/nri/api"
	validator "github.com/nri-handover/nri/plugins/default-validator"
)

func TestGetDefaultValidator(t *testing.T) {
	if p := GetDefaultValidator(nil); p != nil {
		t.Fatalf("nil config gave a plugin")
	}
	if p := GetDefaultValidator(&DefaultValidatorConfig{RequiredPlugins: []string{"x"}}); p != nil {
		t.Fatalf("disabled validator gave a plugin")
	}

	p := GetDefaultValidator(&DefaultValidatorConfig{Enable: true, RequiredPlugins: []string{"x"}})
	if p == nil || p.Base != "default-validator" || p.Index != "00" {
		t.Fatalf("plugin = %+v", p)
	}
	if p.Handlers.ValidateContainerAdjustment == nil || p.Handlers.CreateContainer != nil {
		t.Fatalf("the validator must only validate")
	}
	err := p.Handlers.ValidateContainerAdjustment(context.Background(), &api.ValidateContainerAdjustmentRequest{
		Pod:       &api.PodSandbox{},
		Container: &api.Container{Id: "c"},
	})
	if !errors.Is(err, validator.ErrValidation) {
		t.Fatalf("missing required plugin accepted: %v", err)
	}
}
