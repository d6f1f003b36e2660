package ocigen

import (
	"errors"
	"fmt"
	"strings"

	rspec "github.com/opencontainers/runtime-spec/specs-go"
)

// The runtime callbacks of a generator, as plain functions: each side wraps
// them in its own package's options.

// FailingClass is the class name the resolvers reject.
const FailingClass = "no-such-class"

// ResolveRdt resolves an RDT class to its CLOS (as containerd does).
func ResolveRdt(class string) (*rspec.LinuxIntelRdt, error) {
	if class == FailingClass {
		return nil, fmt.Errorf("unknown RDT class %q", class)
	}
	return &rspec.LinuxIntelRdt{ClosID: class}, nil
}

// ResolveBlockIO resolves a block I/O class to a weight derived from it.
func ResolveBlockIO(class string) (*rspec.LinuxBlockIO, error) {
	if class == FailingClass {
		return nil, fmt.Errorf("unknown block I/O class %q", class)
	}
	w := uint16(100 + len(class))
	return &rspec.LinuxBlockIO{Weight: &w}, nil
}

// InjectCDI records the requested devices in an annotation, or fails for a
// device named "vendor.com/bad=*".
func InjectCDI(s *rspec.Spec, devices []string) error {
	for _, d := range devices {
		if strings.HasPrefix(d, "vendor.com/bad=") {
			return fmt.Errorf("unresolvable CDI device %q", d)
		}
	}
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	s.Annotations["cdi.test/injected"] = strings.Join(devices, ",")
	return nil
}

// ForbiddenAnnotation is the annotation key FilterAnnotations rejects.
const ForbiddenAnnotation = "forbidden.test/key"

// FilterAnnotations drops keys starting with "drop." and rejects
// ForbiddenAnnotation.
func FilterAnnotations(in map[string]string) (map[string]string, error) {
	out := map[string]string{}
	for k, v := range in {
		switch {
		case k == ForbiddenAnnotation:
			return nil, errors.New("annotation " + k + " is not allowed")
		case strings.HasPrefix(k, "drop."):
		default:
			out[k] = v
		}
	}
	return out, nil
}

// CheckResources drops hugepage limits (containerd does with its hugetlb
// controller disabled) and rejects a CPU quota of exactly 1.
func CheckResources(r *rspec.LinuxResources) error {
	if r == nil {
		return nil
	}
	r.HugepageLimits = nil
	if r.CPU != nil && r.CPU.Quota != nil && *r.CPU.Quota == 1 {
		return errors.New("cpu quota 1 is too small")
	}
	return nil
}
