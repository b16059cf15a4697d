import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Clock, LensCounts } from '../../src/core/lensCounts';

/** A clock the test moves by hand. */
class FakeClock implements Clock {
  t = 0;
  private timers: { at: number; fn: () => void; live: boolean }[] = [];
  now(): number {
    return this.t;
  }
  after(ms: number, fn: () => void): { cancel(): void } {
    const timer = { at: this.t + ms, fn, live: true };
    this.timers.push(timer);
    return { cancel: () => (timer.live = false) };
  }
  advance(ms: number): void {
    this.t += ms;
    for (const timer of this.timers.filter((x) => x.live && x.at <= this.t)) {
      timer.live = false;
      timer.fn();
    }
  }
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

function setup(): {
  lens: LensCounts<number>;
  clock: FakeClock;
  asked: string[];
  fired: number[];
  answer: (v: number) => void;
} {
  const clock = new FakeClock();
  const asked: string[] = [];
  const fired: number[] = [];
  let release: ((v: number) => void)[] = [];
  const lens = new LensCounts<number>(
    (key) => {
      asked.push(key);
      return new Promise<number>((r) => release.push(r));
    },
    () => fired.push(clock.now()),
    (a, b) => a === b,
    1000,
    clock,
  );
  const answer = (v: number): void => {
    const pending = release;
    release = [];
    for (const r of pending) r(v);
  };
  return { lens, clock, asked, fired, answer };
}

describe('LensCounts', () => {
  it('keeps the counts shown while the index changes, and asks again at most once a second', async () => {
    const { lens, clock, asked, fired, answer } = setup();
    const first = lens.get('a');
    answer(1);
    assert.equal(await first, 1);
    assert.deepEqual(asked, ['a']);
    for (let i = 0; i < 10; i++) {
      lens.stale(); // Pi appends: ten indexChanged notifications in 100 ms
      clock.advance(10);
      assert.equal(await lens.get('a'), 1, 'the old count stays until the new one arrives');
    }
    assert.equal(asked.length, 2, 'one request for ten changes');
    answer(2);
    await tick();
    assert.deepEqual(fired, [100], 'the lenses refresh once, when the new count is there');
    assert.equal(await lens.get('a'), 2);
    lens.stale();
    clock.advance(500);
    assert.equal(asked.length, 2, 'not again within the second');
    clock.advance(500);
    assert.equal(asked.length, 3);
    answer(2);
    await tick();
    assert.deepEqual(fired, [100], 'a count that did not change does not refresh the lenses');
  });

  it('a failed answer keeps what is shown', async () => {
    const clock = new FakeClock();
    let fail = false;
    const lens = new LensCounts<number>(
      () => (fail ? Promise.reject(new Error('server restarting')) : Promise.resolve(5)),
      () => undefined,
      (a, b) => a === b,
      1000,
      clock,
    );
    assert.equal(await lens.get('a'), 5);
    fail = true;
    lens.stale();
    clock.advance(0);
    await tick();
    assert.equal(await lens.get('a'), 5);
  });
});
