package generate

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// hostPropagation reports the propagation of the mount a host path lives on,
// from /proc/self/mountinfo: "rshared", "rslave" or "" (private).
var hostPropagation = func(path string) (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	return propagationOf(path, f)
}

// propagationOf picks, among the mounts whose mount point is a prefix of
// path, the one with the longest mount point (the first listed of equally
// long ones), and reads its optional fields: "shared:N" means rshared,
// "master:N" rslave. A plain string prefix, as upstream's mountinfo filter.
func propagationOf(path string, mountinfo io.Reader) (string, error) {
	dir := filepath.Clean(path)
	var best []string // optional fields of the chosen mount
	bestLen, found := -1, false
	sc := bufio.NewScanner(mountinfo)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		point, optional, ok := parseMountinfoLine(sc.Text())
		if !ok || !strings.HasPrefix(dir, point) {
			continue
		}
		if len(point) > bestLen {
			best, bestLen, found = optional, len(point), true
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("failed to read mount info: %w", err)
	}
	if !found {
		return "", fmt.Errorf("failed to get mount info for %q", path)
	}
	for _, opt := range best {
		switch {
		case strings.HasPrefix(opt, "shared:"):
			return "rshared", nil
		case strings.HasPrefix(opt, "master:"):
			return "rslave", nil
		}
	}
	return "", nil
}

// parseMountinfoLine returns the mount point and the optional fields of a
// /proc/self/mountinfo line ("ID PARENT MAJ:MIN ROOT POINT OPTIONS
// [OPTIONAL...] - FSTYPE SOURCE SUPER").
func parseMountinfoLine(line string) (string, []string, bool) {
	fields := strings.Fields(line)
	if len(fields) < 7 {
		return "", nil, false
	}
	sep := -1
	for i := 6; i < len(fields); i++ {
		if fields[i] == "-" {
			sep = i
			break
		}
	}
	if sep < 0 {
		return "", nil, false
	}
	return unescapeOctal(fields[4]), fields[6:sep], true
}

// unescapeOctal undoes the kernel's \NNN escapes (space, tab, newline and
// backslash in paths).
func unescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
