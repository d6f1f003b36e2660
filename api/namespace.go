package api

import (
	rspec "github.com/opencontainers/runtime-spec/specs-go"
)

// FromOCILinuxNamespaces converts OCI namespaces; an empty list yields nil.
func FromOCILinuxNamespaces(o []rspec.LinuxNamespace) []*LinuxNamespace {
	var namespaces []*LinuxNamespace
	for _, ns := range o {
		namespaces = append(namespaces, &LinuxNamespace{Type: string(ns.Type), Path: ns.Path})
	}
	return namespaces
}
