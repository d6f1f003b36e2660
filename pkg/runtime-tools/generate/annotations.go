package generate

import (
	"slices"

	nri "github.com/nri-handover/nri/api"
)

// AdjustAnnotations sets or removes annotations, after the annotation filter
// (WithAnnotationFilter) has seen them.
func (g *Generator) AdjustAnnotations(annotations map[string]string) error {
	annotations, err := g.filterAnnotations(annotations)
	if err != nil {
		return err
	}
	applyKeyed(annotations, g.RemoveAnnotation, g.AddAnnotation)
	return nil
}

// applyKeyed applies a map of changes whose keys may be marked for removal:
// removals first, then additions, each in key order, so that the result does
// not depend on map order and a key both removed and set ends up set.
func applyKeyed[V any](changes map[string]V, remove func(string), add func(string, V)) {
	keys := make([]string, 0, len(changes))
	for k := range changes {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if name, marked := nri.IsMarkedForRemoval(k); marked {
			remove(name)
		}
	}
	for _, k := range keys {
		if _, marked := nri.IsMarkedForRemoval(k); !marked {
			add(k, changes[k])
		}
	}
}
