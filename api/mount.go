package api

import (
	"slices"

	rspec "github.com/opencontainers/runtime-spec/specs-go"
)

// SELinuxRelabel is a pseudo mount option asking the runtime to relabel the
// mount source for the container's SELinux context; it is not passed to mount(2).
const SELinuxRelabel = "relabel"

// propagationOptions are the mount options that set rootfs propagation.
var propagationOptions = []string{"rprivate", "rshared", "rslave"}

// FromOCIMounts converts OCI mounts; an empty list yields nil.
func FromOCIMounts(o []rspec.Mount) []*Mount {
	var mounts []*Mount
	for _, m := range o {
		mounts = append(mounts, &Mount{
			Destination: m.Destination,
			Type:        m.Type,
			Source:      m.Source,
			Options:     DupStringSlice(m.Options),
		})
	}
	return mounts
}

// ToOCI converts m to its OCI form. If propagationQuery is not nil it receives
// the last recursive propagation option found in m, so the runtime can adjust
// the rootfs propagation to match.
func (m *Mount) ToOCI(propagationQuery *string) rspec.Mount {
	o := rspec.Mount{
		Destination: m.Destination,
		Type:        m.Type,
		Source:      m.Source,
	}
	for _, opt := range m.Options {
		o.Options = append(o.Options, opt)
		if propagationQuery != nil && slices.Contains(propagationOptions, opt) {
			*propagationQuery = opt
		}
	}
	return o
}

// Cmp reports whether m and v describe the same mount: same destination,
// type and source, and the same options in any order.
func (m *Mount) Cmp(v *Mount) bool {
	if v == nil {
		return false
	}
	if m.Destination != v.Destination || m.Type != v.Type || m.Source != v.Source {
		return false
	}
	a, b := slices.Clone(m.Options), slices.Clone(v.Options)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
