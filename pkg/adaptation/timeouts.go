package adaptation

import (
	"sync"
	"time"

	"github.com/nri-handover/nri/api"
)

const (
	// DefaultPluginRegistrationTimeout bounds how long a connected plugin may
	// take to register.
	DefaultPluginRegistrationTimeout = api.DefaultPluginRegistrationTimeout
	// DefaultPluginRequestTimeout bounds each request to a plugin.
	DefaultPluginRequestTimeout = api.DefaultPluginRequestTimeout
)

// The timeouts are process-wide, as upstream's are, because runtimes set them
// before creating the adaptation.
var (
	timeoutLock         sync.RWMutex
	registrationTimeout = DefaultPluginRegistrationTimeout
	requestTimeout      = DefaultPluginRequestTimeout
)

// Short bounds for runtime-initiated disconnects: a plugin that is being
// dropped must not hold up the runtime.
var (
	shutdownTimeout    = time.Second
	processGracePeriod = 2 * time.Second
	replyDrainTimeout  = 250 * time.Millisecond // replies still being written at teardown
)

// SetPluginRegistrationTimeout sets the registration timeout of plugins.
func SetPluginRegistrationTimeout(t time.Duration) {
	timeoutLock.Lock()
	defer timeoutLock.Unlock()
	registrationTimeout = t
}

// SetPluginRequestTimeout sets the timeout for each request to a plugin.
func SetPluginRequestTimeout(t time.Duration) {
	timeoutLock.Lock()
	defer timeoutLock.Unlock()
	requestTimeout = t
}

func getRegistrationTimeout() time.Duration {
	timeoutLock.RLock()
	defer timeoutLock.RUnlock()
	return registrationTimeout
}

func getRequestTimeout() time.Duration {
	timeoutLock.RLock()
	defer timeoutLock.RUnlock()
	return requestTimeout
}
