package main

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/test/plugins/record"
)

// validator is the plugin plus ValidateContainerAdjustment. It is a separate
// type because the stub derives subscriptions from the interfaces a plugin
// implements: only -validate plugins may look like validators.
type validator struct{ *plugin }

// ValidateContainerAdjustment records which plugins took part and rejects
// the adjustment if it sets the annotation named by -reject-annotation.
func (v validator) ValidateContainerAdjustment(ctx context.Context, req *api.ValidateContainerAdjustmentRequest) error {
	var names []string
	for _, p := range req.GetPlugins() {
		names = append(names, p.GetIndex()+"-"+p.GetName())
	}
	sort.Strings(names)
	l := record.Line{
		Ev:     api.Event_VALIDATE_CONTAINER_ADJUSTMENT.PrettyName(),
		Pod:    req.GetPod().GetId(),
		Ctr:    req.GetContainer().GetId(),
		Seq:    record.SeqOf(req.GetContainer().GetAnnotations()),
		Detail: "plugins=" + strings.Join(names, ","),
	}
	err := v.behave(ctx, l.Ev, l.Ctr)
	if key := v.o.rejectAnnotation; err == nil && key != "" {
		if _, ok := req.GetAdjust().GetAnnotations()[key]; ok {
			err = fmt.Errorf("validator %s: annotation %q is not allowed", v.o.name, key)
		}
	}
	if err != nil {
		l.Err = err.Error()
	}
	v.rec.Add(l)
	return err
}
