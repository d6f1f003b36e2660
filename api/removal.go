package api

// A plugin may only touch what no other plugin touched, unless it first asks
// for removal. Removal requests travel inside the ordinary adjustment fields:
// the key (annotation name, mount destination, device path, namespace type,
// environment variable name, net device host name) is prefixed with
// removalMarker. The marker cannot clash with real keys because none of these
// may legitimately start with '-'.
const removalMarker = '-'

// MarkForRemoval returns key in its "please remove" form.
func MarkForRemoval(key string) string {
	return string(removalMarker) + key
}

// IsMarkedForRemoval returns key without its removal marker and whether the
// marker was present.
func IsMarkedForRemoval(key string) (string, bool) {
	if key != "" && key[0] == removalMarker {
		return key[1:], true
	}
	return key, false
}

// ClearRemovalMarker returns key without a removal marker, if it had one.
func ClearRemovalMarker(key string) string {
	k, _ := IsMarkedForRemoval(key)
	return k
}

// IsMarkedForRemoval reports the variable name and whether the entry asks for removal.
func (e *KeyValue) IsMarkedForRemoval() (string, bool) {
	return IsMarkedForRemoval(e.Key)
}

// IsMarkedForRemoval reports the container path and whether the entry asks for removal.
func (m *Mount) IsMarkedForRemoval() (string, bool) {
	return IsMarkedForRemoval(m.Destination)
}

// IsMarkedForRemoval reports the device path and whether the entry asks for removal.
func (d *LinuxDevice) IsMarkedForRemoval() (string, bool) {
	return IsMarkedForRemoval(d.Path)
}

// IsMarkedForRemoval reports the namespace type and whether the entry asks for removal.
func (n *LinuxNamespace) IsMarkedForRemoval() (string, bool) {
	return IsMarkedForRemoval(n.Type)
}
