package handover_test

import (
	"time"

	"github.com/nri-handover/nri/pkg/adaptation"
)

// The runtime's handover policy options, named for the specs.

func handoverOff() adaptation.Option { return adaptation.WithPluginHandover(false) }

func standbyGrace(d time.Duration) adaptation.Option { return adaptation.WithStandbyGrace(d) }

func refuseDowngrades() adaptation.Option { return adaptation.WithRefuseDowngrades() }
