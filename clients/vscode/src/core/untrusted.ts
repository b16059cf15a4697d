/**
 * Recorded text is data. The server masks credentials and strips control bytes before it answers
 * (server/pi_event_search/core/secrets.py); this is the extension's last guard, whatever server
 * answered: every string of every answer goes through the same control-byte rule, tested against
 * the cases every client runs (tests/data/control-vectors.json). Pure: no vscode import.
 *
 * The rule, bounded so that no byte removes more than its own sequence: CSI (ESC [, at most 64
 * parameters and 16 intermediates, its final byte when there is one); OSC, DCS, SOS, PM, APC strings
 * whole only when at most 4096 printable ASCII characters end with BEL, ESC \ or ST (an unterminated
 * one loses its introducer only); any other escape; each C1 character alone (Latin-1 mojibake, `Ý`
 * read as `Ã\x9d`, keeps its text); C0 but tab and newline; DEL; the bidirectional overrides.
 */

const CONTROLS =
  // eslint-disable-next-line no-control-regex
  /\x1b\[[0-?]{0,64}[ -/]{0,16}[@-~]?|\x1b[\]PX^_][ -~]{0,4096}(?:\x07|\x1b\\|\x9c)|\x1b[ -/]{0,16}[0-~]?|[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;

export function stripControls(text: string): string {
  return text.replace(CONTROLS, '');
}

/** An answer with every string (keys and values) stripped of control bytes. */
export function cleaned<T>(value: T): T {
  if (typeof value === 'string') return stripControls(value) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => cleaned(v)) as T;
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [stripControls(k), cleaned(v)])) as T;
  }
  return value;
}
