package api

import (
	rspec "github.com/opencontainers/runtime-spec/specs-go"
)

// FromOCILinuxDevices converts OCI devices; an empty list yields nil.
func FromOCILinuxDevices(o []rspec.LinuxDevice) []*LinuxDevice {
	var devices []*LinuxDevice
	for _, d := range o {
		devices = append(devices, &LinuxDevice{
			Path:     d.Path,
			Type:     d.Type,
			Major:    d.Major,
			Minor:    d.Minor,
			FileMode: FileMode(d.FileMode),
			Uid:      UInt32(d.UID),
			Gid:      UInt32(d.GID),
		})
	}
	return devices
}

// ToOCI converts d to its OCI form; a nil d gives the zero device.
func (d *LinuxDevice) ToOCI() rspec.LinuxDevice {
	if d == nil {
		return rspec.LinuxDevice{}
	}
	return rspec.LinuxDevice{
		Path:     d.Path,
		Type:     d.Type,
		Major:    d.Major,
		Minor:    d.Minor,
		FileMode: d.FileMode.Get(),
		UID:      d.Uid.Get(),
		GID:      d.Gid.Get(),
	}
}

// AccessString returns the device-cgroup access a runtime grants for d:
// always read and write (the node's file mode governs access on its own),
// plus mknod for block devices. This matches what upstream runtimes produce.
func (d *LinuxDevice) AccessString() string {
	if d.Type == "b" {
		return "rwm"
	}
	return "rw"
}

// Cmp reports whether d and v refer to the same device node, i.e. have the
// same type and major/minor numbers.
func (d *LinuxDevice) Cmp(v *LinuxDevice) bool {
	if v == nil {
		return false
	}
	return d.Type == v.Type && d.Major == v.Major && d.Minor == v.Minor
}
