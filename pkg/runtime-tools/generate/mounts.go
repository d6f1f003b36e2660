package generate

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	rspec "github.com/opencontainers/runtime-spec/specs-go"

	nri "github.com/nri-handover/nri/api"
)

// AdjustMounts adds, replaces (by destination) or removes mounts, then sorts
// all mounts so that a parent is mounted before what is mounted inside it.
//
// A mount asking for rshared propagation needs a shared source on the host
// and makes the rootfs propagation rshared; one asking for rslave needs a
// shared or slave source and makes the rootfs at least rslave. As upstream,
// the propagation option found last carries over to later mounts of the
// same adjustment that have none of their own.
func (g *Generator) AdjustMounts(mounts []*nri.Mount) error {
	if !slices.ContainsFunc(mounts, func(m *nri.Mount) bool { return m != nil }) {
		return nil // nothing, or only nil entries: nothing to sort either
	}
	propagation := ""
	for _, m := range mounts {
		if m == nil {
			continue
		}
		if dest, remove := m.IsMarkedForRemoval(); remove {
			g.RemoveMount(dest)
			continue
		}
		g.RemoveMount(m.Destination)
		mnt := m.ToOCI(&propagation)
		switch propagation {
		case "rshared":
			if err := g.requirePropagation(mnt.Source, "rshared"); err != nil {
				return fmt.Errorf("failed to adjust mounts in OCI Spec: %w", err)
			}
			if err := g.SetLinuxRootPropagation("rshared"); err != nil {
				return fmt.Errorf("failed to adjust rootfs propagation in OCI Spec: %w", err)
			}
		case "rslave":
			if err := g.requirePropagation(mnt.Source, "rshared", "rslave"); err != nil {
				return fmt.Errorf("failed to adjust mounts in OCI Spec: %w", err)
			}
			if root := g.linux().RootfsPropagation; root != "rshared" && root != "rslave" {
				if err := g.SetLinuxRootPropagation("rslave"); err != nil {
					return fmt.Errorf("failed to adjust rootfs propagation in OCI Spec: %w", err)
				}
			}
		}
		g.AddMount(mnt)
	}
	g.sortMounts()
	return nil
}

// sortMounts orders mounts by destination depth, then destination (the
// order CRI-O and Docker use, made total for stable results).
func (g *Generator) sortMounts() {
	mounts := g.Mounts()
	g.ClearMounts()
	depth := func(dest string) int {
		return strings.Count(filepath.Clean(dest), string(os.PathSeparator))
	}
	slices.SortStableFunc(mounts, func(a, b rspec.Mount) int {
		if da, db := depth(a.Destination), depth(b.Destination); da != db {
			return da - db
		}
		return strings.Compare(a.Destination, b.Destination)
	})
	g.spec().Mounts = mounts
}

// requirePropagation fails unless the host path's mount propagation is one
// of accepted.
func (g *Generator) requirePropagation(path string, accepted ...string) error {
	if g.propagation == nil {
		return nil
	}
	prop, err := g.propagation(path)
	if err != nil {
		return err
	}
	if slices.Contains(accepted, prop) {
		return nil
	}
	return fmt.Errorf("path %q mount propagation is %q, not %q", path, prop, strings.Join(accepted, " or "))
}
