// Package skel is the skeleton of an NRI v0.1 plugin: a binary the runtime
// runs with the command as its argument ("invoke") and a JSON types.Request
// on stdin, which answers with a JSON types.Result on stdout. Upstream still
// ships it for plugins not yet moved to the v0.2 protocol (pkg/stub); it is
// written here from upstream's behaviour.
package skel

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	types "github.com/containerd/nri/types/v1"
)

// Plugin is a v0.1 plugin's implementation.
type Plugin interface {
	// Type is the plugin's name, reported in its results.
	Type() string
	// Invoke handles one request.
	Invoke(context.Context, *types.Request) (*types.Result, error)
}

// Run serves the one request of this process: it reads the request from
// stdin, runs the command in os.Args[1] and writes the result to stdout. A
// failure of the plugin, or an unknown command, is reported in the result's
// Error (the runtime reads it there), not returned: Run returns an error only
// when it cannot read the request or write the result.
func Run(ctx context.Context, plugin Plugin) error {
	return run(ctx, plugin, os.Args, os.Stdin, os.Stdout)
}

func run(ctx context.Context, plugin Plugin, args []string, in io.Reader, out io.Writer) error {
	var req types.Request
	if err := json.NewDecoder(in).Decode(&req); err != nil {
		return fmt.Errorf("reading the request: %w", err)
	}
	// Upstream indexes os.Args[1] unchecked and panics without it; a
	// missing command is reported like an unknown one instead.
	cmd := ""
	if len(args) > 1 {
		cmd = args[1]
	}
	var res *types.Result
	switch cmd {
	case "invoke":
		var err error
		if res, err = plugin.Invoke(ctx, &req); err != nil {
			// The error replaces whatever result came with it.
			res = req.NewResult(plugin.Type())
			res.Error = err.Error()
		}
	default:
		res = req.NewResult(plugin.Type())
		res.Error = fmt.Sprintf("invalid arg %s", cmd)
	}
	if err := json.NewEncoder(out).Encode(res); err != nil {
		return fmt.Errorf("writing the result: %w", err)
	}
	return nil
}
