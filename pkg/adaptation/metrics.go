package adaptation

import "time"

// Metrics receives measurements of plugin activity. Methods are called from
// many goroutines at once and, for event dispatch, while the adaptation holds
// its lock: implementations must be thread-safe and must not block.
type Metrics interface {
	// RecordPluginInvocation counts one request to a plugin and its outcome.
	RecordPluginInvocation(pluginName, operation string, err error)
	// RecordPluginLatency records how long a plugin took to answer.
	RecordPluginLatency(pluginName, operation string, latency time.Duration)
	// RecordPluginAdjustments records what a plugin asked to change.
	RecordPluginAdjustments(pluginName, operation string, adjust *ContainerAdjustment, updates, evicts int)
	// UpdatePluginCount reports the number of plugins receiving events.
	UpdatePluginCount(count int)
}

type noopMetrics struct{}

var _ Metrics = noopMetrics{}

func (noopMetrics) RecordPluginInvocation(string, string, error)                           {}
func (noopMetrics) RecordPluginLatency(string, string, time.Duration)                      {}
func (noopMetrics) RecordPluginAdjustments(string, string, *ContainerAdjustment, int, int) {}
func (noopMetrics) UpdatePluginCount(int)                                                  {}
