// storage/followed-list.ts, which the blocks and the domain pool are followed across nodes
// with: the version read at most refreshMs after the last read, the list only when the
// version moved, uses at once sharing one read, reload() seeing a change at once, and a
// failed read keeping the last list in force until a later read succeeds.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { followList } from '../../src/storage/followed-list.js';

/** A list in "the database": its version, its value, what was read, and a switch to fail. */
function source() {
  const s = { version: 1, value: ['a'], versionReads: 0, listReads: 0, failing: false, t: 0 };
  const list = followList({
    version: async () => {
      s.versionReads++;
      if (s.failing) throw new Error('database gone');
      return String(s.version);
    },
    read: async () => {
      s.listReads++;
      return [...s.value];
    },
    initial: [] as string[],
    refreshMs: 1000,
    what: 'the test list',
    clock: () => s.t,
  });
  return { s, list };
}

describe('followed list', () => {
  it('reads the version at most once per refreshMs, and the list only when the version moved', async () => {
    const { s, list } = source();
    assert.deepEqual(await list.fresh(), ['a']);
    assert.deepEqual([s.versionReads, s.listReads], [1, 1]);
    s.t = 999;
    s.value = ['a', 'b'];
    s.version = 2;
    assert.deepEqual(await list.fresh(), ['a'], 'not yet refreshMs old: the list as read');
    assert.equal(s.versionReads, 1);
    s.t = 1000;
    assert.deepEqual(await list.fresh(), ['a', 'b'], 'the version moved: read again');
    assert.deepEqual([s.versionReads, s.listReads], [2, 2]);
    s.t = 2000;
    await list.fresh();
    assert.deepEqual([s.versionReads, s.listReads], [3, 2], 'same version: the list is not read');
  });

  it('uses at once share one read; reload() sees a change made meanwhile at once', async () => {
    const { s, list } = source();
    await Promise.all([list.fresh(), list.fresh(), list.fresh()]);
    assert.deepEqual([s.versionReads, s.listReads], [1, 1]);
    s.value = ['c'];
    s.version = 5;
    await list.reload();
    assert.deepEqual(await list.fresh(), ['c'], 'without waiting refreshMs');
  });

  it('a failed read keeps the last list in force, and a read after refreshMs recovers', async () => {
    const { s, list } = source();
    await list.fresh();
    s.failing = true;
    s.t = 1000;
    assert.deepEqual(await list.fresh(), ['a'], 'the last list read');
    s.t = 1500;
    await list.fresh();
    assert.equal(s.versionReads, 2, 'not asked again before refreshMs');
    s.failing = false;
    s.value = ['d'];
    s.version = 9;
    s.t = 2000;
    assert.deepEqual(await list.fresh(), ['d']);
  });
});
