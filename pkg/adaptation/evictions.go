package adaptation

// WithEvictionForwarding makes the merged CreateContainer and UpdateContainer
// replies carry the container evictions plugins ask for (the first reason
// given for a container is kept, and a plugin asking to evict the container
// being created fails the creation), for the runtime to carry out.
//
// Without it evictions are dropped, as upstream NRI v0.12.5 does: a runtime
// written against upstream may act on any eviction it finds in a reply (as
// containerd does), so forwarding must be something the runtime asked for,
// not a change it gets by switching libraries.
func WithEvictionForwarding() Option {
	return func(r *Adaptation) error {
		r.forwardEvictions = true
		return nil
	}
}
