// Package stub connects an NRI plugin to a container runtime.
//
// It keeps the Go API of containerd/nri's pkg/stub (v0.12.5): a plugin
// implements the handler interfaces for the events it cares about
// (CreateContainerInterface, SynchronizeInterface, ...), New derives the
// event subscription from them, and Run serves the runtime until the
// connection ends. Plugins move over by changing import paths. The Stub
// interface has exactly upstream's methods; what this package adds is on
// HandoverStub. Like upstream's, the stub logs through NRI's pkg/log unless
// WithLogger says otherwise.
//
// On top of that it supports zero-downtime handover between instances of
// the same plugin (for example the old and new pod of a DaemonSet rollout):
//
//   - Identity: a plugin registers its name and index as before, plus its own
//     version (WithPluginVersion, default: the main module's version), an
//     instance ID (WithInstanceID, default $NRI_PLUGIN_INSTANCE_ID) and a
//     rollout generation (WithGeneration, default $NRI_PLUGIN_GENERATION);
//     only a plugin that opted in with WithHandover reads those variables,
//     and New refuses WithInstanceID and WithGeneration without it.
//     The plugin name is what makes two instances "the same plugin".
//
//   - Readiness: against a handover-capable runtime, the stub becomes ready
//     only when the runtime makes this instance the active one
//     (RoleChange ACTIVE), not merely when Synchronize ran. Against an
//     older runtime (HandoverAvailable() == false) it is ready once
//     registered and synchronized. Ready, WaitReady and WithReadyFile
//     report that state. ReadyzHandler, the pod's readinessProbe, reports
//     it too, and answers 200 again once the instance handed over (standby,
//     or superseded and held until stopped), saying so in its body: a
//     DaemonSet counts a node available by its oldest pod, so an old pod
//     that turned unready at the switch would make the node unavailable for
//     about minReadySeconds per rollout.
//
//   - Shutdown reasons: the runtime says why it disconnects a plugin that
//     opted in (WithHandover; any other plugin is disconnected untold, as by
//     upstream's runtime, and Run returns ErrDisconnected).
//     ShutdownWithReasonInterface receives the request; Run returns a
//     *ShutdownError matching ErrSuperseded, ErrRuntimeShutdown, ... with
//     errors.Is. A superseded stub does not reconnect and Run keeps
//     blocking, serving no events, until Stop or its context ends: exiting would only
//     make the supervisor restart it into a refused registration
//     (WithExitOnSuperseded returns at once instead).
//
//   - Takeover: inside Synchronize, SyncInfoFrom(ctx) tells whether this
//     instance takes over from a predecessor (and which version), whether
//     the round is a delta catch-up round, and what was removed.
//
// # Kubernetes
//
// A DaemonSet plugin wires its identity through the downward API and probes
// readiness with an httpGet probe on the pod's network, which the stub
// answers itself on $NRI_PLUGIN_READYZ_ADDR (ReadyzAddrEnvVar; a plugin that
// serves ReadyzHandler itself leaves it unset):
//
//	env:
//	- name: NRI_PLUGIN_INSTANCE_ID
//	  valueFrom: {fieldRef: {fieldPath: metadata.uid}}
//	- name: NRI_PLUGIN_GENERATION
//	  valueFrom: {fieldRef: {fieldPath: "metadata.labels['pod-template-generation']"}}
//	- name: NRI_PLUGIN_READYZ_ADDR
//	  value: ":8080"
//	readinessProbe:
//	  httpGet: {path: /readyz, port: 8080}
//
// With maxSurge-style rollouts the new pod turns ready only after the
// runtime switched events over to it, so the old pod is removed only then,
// and the old pod stays ready until it is. deploy/README.md has the rest.
package stub
