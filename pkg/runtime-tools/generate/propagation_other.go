//go:build !linux

package generate

// hostPropagation is nil where there is no mountinfo: any propagation is
// accepted, as upstream does.
var hostPropagation func(path string) (string, error)
