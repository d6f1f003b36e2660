package adaptation

// SynchronizedMetrics is implemented by a Metrics that wants to know when a
// plugin's join took effect. It is optional, as HandoverMetrics is. Neither
// the plugin's readiness nor the sync lock tells it: the updates a plugin's
// synchronization asks for go through the UpdateFn after the plugin turned
// active. The test runtime (test/runtime) waits on it.
type SynchronizedMetrics interface {
	// RecordSynchronized reports that an instance of plugin (its indexed
	// name, NN-name; instance as it registered, "" if none) joined: it
	// receives events, and the updates its synchronization asked for,
	// updates of them, went through the UpdateFn.
	RecordSynchronized(plugin, instance string, updates int)
}

// recordSynchronized tells a SynchronizedMetrics that p joined and its
// synchronization's updates were applied.
func (r *Adaptation) recordSynchronized(p *plugin, updates int) {
	if m, ok := r.metrics.(SynchronizedMetrics); ok {
		m.RecordSynchronized(p.name(), p.instance, updates)
	}
}
