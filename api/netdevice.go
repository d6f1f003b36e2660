package api

import (
	rspec "github.com/opencontainers/runtime-spec/specs-go"
)

// FromOCILinuxNetDevice converts one OCI network device.
func FromOCILinuxNetDevice(o rspec.LinuxNetDevice) *LinuxNetDevice {
	return &LinuxNetDevice{Name: o.Name}
}

// FromOCILinuxNetDevices converts OCI network devices keyed by host device
// name; an empty map yields nil.
func FromOCILinuxNetDevices(o map[string]rspec.LinuxNetDevice) map[string]*LinuxNetDevice {
	if len(o) == 0 {
		return nil
	}
	out := make(map[string]*LinuxNetDevice, len(o))
	for host, d := range o {
		out[host] = FromOCILinuxNetDevice(d)
	}
	return out
}

// ToOCI converts d to its OCI form; nil gives the zero device.
func (d *LinuxNetDevice) ToOCI() rspec.LinuxNetDevice {
	if d == nil {
		return rspec.LinuxNetDevice{}
	}
	return rspec.LinuxNetDevice{Name: d.Name}
}

// ToOCILinuxNetDevices converts network devices keyed by host device name;
// nil stays nil.
func ToOCILinuxNetDevices(devices map[string]*LinuxNetDevice) map[string]rspec.LinuxNetDevice {
	if devices == nil {
		return nil
	}
	out := make(map[string]rspec.LinuxNetDevice, len(devices))
	for host, d := range devices {
		out[host] = d.ToOCI()
	}
	return out
}
