/**
 * The CodeLens counts of the files shown, kept until new ones arrive. Pi appends to its session
 * while it works and every append brings a piEvents/indexChanged: dropping the counts then would
 * blank every lens until the server answered again (a flicker per append). Instead the counts
 * stay, the files shown are asked again at most once per `minGapMs`, and only a count that
 * changed makes the lenses refresh.
 */
export interface Clock {
  now(): number;
  after(ms: number, fn: () => void): { cancel(): void };
}

export const realClock: Clock = {
  now: () => Date.now(),
  after: (ms, fn) => {
    const t = setTimeout(fn, ms);
    return { cancel: () => clearTimeout(t) };
  },
};

export class LensCounts<C> {
  private readonly shown = new Map<string, C | undefined>();
  private readonly asking = new Map<string, Promise<void>>();
  private timer: { cancel(): void } | undefined;
  private last = -Infinity;

  constructor(
    private readonly fetch: (key: string) => Promise<C | undefined>,
    private readonly changed: () => void,
    private readonly same: (a: C | undefined, b: C | undefined) => boolean,
    private readonly minGapMs = 1000,
    private readonly clock: Clock = realClock,
  ) {}

  /** The counts to show now: the last known ones, else asked for (once) and awaited. */
  async get(key: string): Promise<C | undefined> {
    if (!this.shown.has(key)) await this.ask(key);
    return this.shown.get(key);
  }

  /** The index changed: ask again for every file shown, at most once per gap. */
  stale(): void {
    if (this.timer) return;
    const wait = Math.max(0, this.last + this.minGapMs - this.clock.now());
    this.timer = this.clock.after(wait, () => {
      this.timer = undefined;
      this.last = this.clock.now();
      for (const key of [...this.shown.keys()]) void this.ask(key);
    });
  }

  /** Forget everything (the setting was turned off and on): the next get asks again. */
  clear(): void {
    this.shown.clear();
    this.changed();
  }

  dispose(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  private ask(key: string): Promise<void> {
    const pending = this.asking.get(key);
    if (pending) return pending;
    const done = this.fetch(key)
      .then((counts) => {
        const known = this.shown.has(key);
        const before = this.shown.get(key);
        this.shown.set(key, counts);
        if (known && !this.same(before, counts)) this.changed();
      })
      .catch(() => {
        // not running yet, or failed: keep what is shown; a file never shown is asked again later
      })
      .finally(() => this.asking.delete(key));
    this.asking.set(key, done);
    return done;
  }
}
