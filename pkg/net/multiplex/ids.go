package multiplex

// ConnID identifies a logical connection within a Mux.
type ConnID uint32

const (
	// reservedConnID (0) is never handed out.
	reservedConnID ConnID = 0
	// LowestConnID is the lowest id a caller may open.
	LowestConnID ConnID = 1
)

// The two connections of an NRI session.
const (
	// PluginServiceConn carries the plugin's service (the runtime calls it).
	PluginServiceConn ConnID = 1
	// RuntimeServiceConn carries the runtime's service (the plugin calls it).
	RuntimeServiceConn ConnID = 2
)

const (
	// headerLen is the frame header: connection id and payload length.
	headerLen = 8
	// maxPayload is the largest frame payload: a ttrpc message header (10
	// bytes) plus ttrpc's largest message (4 MiB). Upstream rejects larger
	// frames as a corrupt stream, so we never send them either.
	maxPayload = 10 + 4<<20
	// defaultQueueLen is how many frames may wait for a reader per connection
	// before the whole Mux is torn down.
	defaultQueueLen = 256
)
