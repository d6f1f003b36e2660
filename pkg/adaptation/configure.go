package adaptation

import (
	"context"
	"fmt"

	"github.com/nri-handover/nri/api"
)

// configure hands the plugin its configuration and the runtime's identity and
// records the events it subscribes to and its failure policy.
func (p *plugin) configure(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, getRequestTimeout())
	defer cancel()

	req := &api.ConfigureRequest{
		Config:              p.cfg,
		RuntimeName:         p.r.name,
		RuntimeVersion:      p.r.version,
		RegistrationTimeout: getRegistrationTimeout().Milliseconds(),
		RequestTimeout:      getRequestTimeout().Milliseconds(),
		NRIVersion:          p.r.nriVersion,
		Features:            p.offeredFeatures(),
	}

	rpl, err := p.svc.Configure(ctx, req)
	if err = requestError(ctx, err); err != nil {
		return fmt.Errorf("plugin %s: configure failed: %w", p.name(), err)
	}

	events := api.EventMask(rpl.GetEvents())
	if events == 0 {
		events = api.ValidEvents
	}
	if extra := events &^ api.ValidEvents; extra != 0 {
		return fmt.Errorf("plugin %s: configure returned invalid events 0x%x", p.name(), int32(extra))
	}

	p.events = events
	p.policy = rpl.GetFailurePolicy() // nil means the defaults; the getters accept nil
	p.r.log.Infof(ctx, "plugin %s subscribed to %s", p.name(), events.PrettyString())
	return nil
}
