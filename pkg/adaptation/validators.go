package adaptation

import (
	"context"
	"fmt"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/nri-handover/nri/api"
)

// newValidationRequest prepares what validators will see: the container as
// the runtime proposed it (cloned before plugins adjust it) and every plugin
// taking part. It returns nil when no plugin validates.
func newValidationRequest(req *CreateContainerRequest, plugins []*plugin) *ValidateContainerAdjustmentRequest {
	validators := false
	for _, p := range plugins {
		if !p.isClosed() && p.isValidator() {
			validators = true
			break
		}
	}
	if !validators {
		return nil
	}

	v := &ValidateContainerAdjustmentRequest{
		Pod:       req.GetPod(),
		Container: proto.Clone(req.GetContainer()).(*Container),
	}
	for _, p := range plugins {
		if !p.isClosed() {
			v.Plugins = append(v.Plugins, &PluginInstance{Name: p.base, Index: p.idx})
		}
	}
	return v
}

// validateContainerAdjustment runs the validators on the merged result, in
// parallel since they cannot change it. Any rejection or failure of a
// validator fails the request, whatever its failure policy.
func (r *Adaptation) validateContainerAdjustment(ctx context.Context, plugins []*plugin, v *ValidateContainerAdjustmentRequest, res *result) (*CreateContainerResponse, error) {
	rpl := res.createContainerResponse()
	if v == nil {
		return rpl, nil
	}

	v.Adjust = rpl.GetAdjust()
	v.Update = rpl.GetUpdate()
	v.Owners = res.owners

	var validators []*plugin
	for _, p := range plugins {
		if p.receives(api.Event_VALIDATE_CONTAINER_ADJUSTMENT) {
			validators = append(validators, p)
		}
	}

	errs := make([]error, len(validators))
	var wg sync.WaitGroup
	for i, p := range validators {
		spawn(&wg, func() { errs[i] = p.validate(ctx, v) })
	}
	wg.Wait()

	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return rpl, nil
}

// validate asks one validator about the merged adjustment.
func (p *plugin) validate(ctx context.Context, v *ValidateContainerAdjustmentRequest) error {
	spec := eventTable[api.Event_VALIDATE_CONTAINER_ADJUSTMENT]
	op := spec.event.PrettyName()

	rctx, cancel := context.WithTimeout(ctx, getRequestTimeout())
	defer cancel()

	start := time.Now()
	rpl, err := spec.call(rctx, p.svc, v)
	p.recordInvocation(op, start, err)
	if err != nil {
		if ctx.Err() == nil && p.dropsPlugin(err) {
			p.r.log.Errorf(ctx, "closing plugin %s, failed to handle %s: %v", p.name(), op, err)
			p.shutdown(shutdownReasonFor(err), fmt.Sprintf("failed to handle %s: %v", op, err), nil)
		}
		return fmt.Errorf("validator plugin %s failed: %w", p.name(), err)
	}

	res, _ := rpl.(*ValidateContainerAdjustmentResponse)
	if !res.GetReject() {
		return nil
	}
	reason := res.GetReason()
	if reason == "" {
		reason = "unknown rejection reason"
	}
	return fmt.Errorf("validator %q rejected container adjustment, reason: %s", p.name(), reason)
}
