/**
 * Wire shapes of the pi-event-search server (docs/protocol.md). One copy for both clients: it lives
 * in the Pi extension, which ships its sources and must stay whole when installed from npm; esbuild
 * bundles it into this extension.
 */
export * from '../../../pi/src/protocol';
