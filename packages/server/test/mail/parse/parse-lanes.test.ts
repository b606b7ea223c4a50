// Who goes next to the parser's threads (mail/parse/parse-lanes.ts): small and large
// messages wait in lanes of their own and take turns, so small mail waits for at most
// one large parse, and large mail is never starved by a stream of small mail; one client
// holds at most its share of the threads.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { clientShare, createParseLanes, type Lane, type ParseLanes } from '../../../src/mail/parse/parse-lanes.js';

/**
 * Tasks that wait in `lanes` (name, lane, client), each noting its name in `order` when it
 * gets a thread and giving the thread back in a later turn, as a parse does.
 */
function queue(lanes: ParseLanes, order: string[], tasks: [name: string, lane: Lane, client?: string][]): Promise<void>[] {
  const never = new AbortController().signal;
  return tasks.map(async ([name, lane, client]) => {
    const leave = (await lanes.enter(lane, never, client))!;
    order.push(name);
    await new Promise((r) => setImmediate(r));
    leave();
  });
}

describe('parser lanes', () => {
  it('with one thread, a small task waiting behind large ones goes right after the running one', async () => {
    const lanes = createParseLanes(1);
    const order: string[] = [];
    const never = new AbortController().signal;
    const running = (await lanes.enter('large', never))!;
    const tasks = queue(lanes, order, [
      ['L2', 'large'],
      ['L3', 'large'],
      ['S1', 'small'],
      ['S2', 'small'],
    ]);
    assert.deepEqual(lanes.waiting(), { small: 2, large: 2 });
    running();
    await Promise.all(tasks);
    assert.deepEqual(order, ['S1', 'L2', 'S2', 'L3']);
  });

  it('large tasks still go every other time however much small work keeps arriving', async () => {
    const lanes = createParseLanes(1);
    const order: Lane[] = [];
    const never = new AbortController().signal;
    const first = (await lanes.enter('small', never))!;
    const enter = (lane: Lane) =>
      lanes.enter(lane, never).then(async (leave) => {
        order.push(lane);
        // A small task brings another small one with it, as a steady stream of mail would.
        if (lane === 'small' && order.length < 20) void enter('small');
        await new Promise((r) => setImmediate(r));
        leave!();
      });
    const large = [enter('large'), enter('large'), enter('large')];
    void enter('small');
    first();
    await Promise.all(large);
    assert.deepEqual(order.slice(0, 6), ['large', 'small', 'large', 'small', 'large', 'small']);
  });

  it('within a lane the client given a thread least recently goes next, each client\'s tasks in order', async () => {
    const lanes = createParseLanes(1);
    const order: string[] = [];
    const never = new AbortController().signal;
    const running = (await lanes.enter('large', never, 'a'))!;
    const tasks = queue(lanes, order, [
      ['a2', 'large', 'a'],
      ['a3', 'large', 'a'],
      ['a4', 'large', 'a'],
      ['b1', 'large', 'b'],
      ['c1', 'large', 'c'],
      ['b2', 'large', 'b'],
    ]);
    assert.deepEqual(lanes.waiting(), { small: 0, large: 6 });
    running();
    await Promise.all(tasks);
    // One client queued three before the others came: they wait for the one it had running, not for all.
    assert.deepEqual(order, ['b1', 'c1', 'a2', 'b2', 'a3', 'a4']);
  });

  it('an aborted wait leaves its client\'s turn to the others; close answers every client', async () => {
    const lanes = createParseLanes(1);
    const never = new AbortController().signal;
    const running = (await lanes.enter('large', never, 'a'))!;
    const abort = new AbortController();
    const gone = lanes.enter('large', abort.signal, 'b');
    const a2 = lanes.enter('large', never, 'a');
    const c1 = lanes.enter('large', never, 'c');
    abort.abort();
    assert.equal(await gone, undefined, 'the aborted wait got no thread');
    assert.deepEqual(lanes.waiting(), { small: 0, large: 2 });
    running();
    // b's turn went with its wait: c, which had no thread yet, goes before a's second task.
    const leave = await c1;
    assert.equal(typeof leave, 'function');
    assert.deepEqual(lanes.waiting(), { small: 0, large: 1 });
    lanes.close();
    assert.equal(await a2, undefined, 'closed: the waiting client is answered without a thread');
    leave!();
  });

  it('takes as many tasks at once as it has threads, and no more', async () => {
    const lanes = createParseLanes(2);
    const never = new AbortController().signal;
    const a = (await lanes.enter('large', never))!;
    const b = (await lanes.enter('small', never))!;
    let third = false;
    const c = lanes.enter('small', never).then((leave) => {
      third = true;
      return leave!;
    });
    await new Promise((r) => setImmediate(r));
    assert.equal(third, false, 'both threads busy');
    a();
    a(); // a second call gives nothing back twice
    (await c)();
    assert.equal(third, true);
    b();
    const d = await lanes.enter('large', never);
    const e = await lanes.enter('large', never);
    assert.ok(d && e, 'two free threads again');
  });

  it('a task whose wait is aborted leaves its lane without a thread; close answers every waiting task', async () => {
    const lanes = createParseLanes(1);
    const never = new AbortController().signal;
    const held = (await lanes.enter('large', never))!;
    const abort = new AbortController();
    const gaveUp = lanes.enter('small', abort.signal);
    const waiting = lanes.enter('large', never);
    abort.abort();
    assert.equal(await gaveUp, undefined);
    assert.deepEqual(lanes.waiting(), { small: 0, large: 1 });
    lanes.close();
    assert.equal(await waiting, undefined);
    assert.equal(await lanes.enter('small', never), undefined, 'nothing is given after close');
    held();
  });
});

describe('parser lanes with a spare thread', () => {
  it('a small task takes the spare while a large one runs; a large task never does', async () => {
    const lanes = createParseLanes(1, 1);
    const never = new AbortController().signal;
    const large = (await lanes.enter('large', never))!;
    let secondLarge = false;
    const waitingLarge = lanes.enter('large', never).then((leave) => ((secondLarge = true), leave!));
    const small = await lanes.enter('small', never);
    assert.ok(small, 'the spare thread, at once');
    let thirdSmall = false;
    const waitingSmall = lanes.enter('small', never).then((leave) => ((thirdSmall = true), leave!));
    await new Promise((r) => setImmediate(r));
    assert.equal(secondLarge, false, 'a large task does not take the spare');
    assert.equal(thirdSmall, false, 'one spare, not more');
    small!();
    (await waitingSmall)();
    large();
    (await waitingLarge)();
    assert.equal(secondLarge, true);
  });

  it('without a large task running, small tasks have only the regular threads', async () => {
    const lanes = createParseLanes(1, 1);
    const never = new AbortController().signal;
    const first = (await lanes.enter('small', never))!;
    let second = false;
    const next = lanes.enter('small', never).then((leave) => ((second = true), leave!));
    await new Promise((r) => setImmediate(r));
    assert.equal(second, false);
    first();
    (await next)();
    assert.equal(second, true);
  });
});

describe('parser lanes: each client\'s share of the threads', () => {
  const never = new AbortController().signal;
  const settle = () => new Promise((r) => setImmediate(r));

  it('half the threads (at least one) by default: 1 and 2 threads give 1, 4 give 2', async () => {
    assert.deepEqual([1, 2, 3, 4, 8].map(clientShare), [1, 1, 1, 2, 4]);
  });

  it('a client at its share waits in its own queue while a thread is free; another client takes that thread at once', async () => {
    const lanes = createParseLanes(2);
    const a1 = (await lanes.enter('large', never, 'a'))!;
    let a2Given = false;
    const a2 = lanes.enter('large', never, 'a').then((leave) => ((a2Given = true), leave!));
    await settle();
    assert.equal(a2Given, false, "a's second task waits though a thread is free");
    assert.deepEqual(lanes.waiting(), { small: 0, large: 1 });
    const b1 = await lanes.enter('large', never, 'b');
    assert.ok(b1, "b takes the free thread at once, past a's waiting task");
    b1();
    await settle();
    assert.equal(a2Given, false, 'b leaving frees a thread, yet a still holds its share');
    a1();
    (await a2)();
    assert.equal(a2Given, true, 'a goes again once its own task is done');
  });

  it('a client whose share is held takes no spare thread either; small and large tasks count alike', async () => {
    const lanes = createParseLanes(1, 1);
    const a1 = (await lanes.enter('large', never, 'a'))!;
    let aSmallGiven = false;
    const aSmall = lanes.enter('small', never, 'a').then((leave) => ((aSmallGiven = true), leave!));
    const bSmall = await lanes.enter('small', never, 'b');
    assert.ok(bSmall, "another client's small task has the spare");
    bSmall();
    await settle();
    assert.equal(aSmallGiven, false, "a's small task waits for a's large one, not for a thread");
    a1();
    (await aSmall)();
    assert.equal(aSmallGiven, true);
  });

  it('tasks of no client (batches of several clients\' mail) are bounded by the threads alone', async () => {
    const lanes = createParseLanes(2);
    const x = await lanes.enter('small', never);
    const y = await lanes.enter('small', never);
    assert.ok(x && y, 'both threads');
    x();
    y();
  });

  it('many clients at their share: every free thread goes to a client under it, in turn', async () => {
    const lanes = createParseLanes(4);
    const order: string[] = [];
    const held = await Promise.all([lanes.enter('large', never, 'a'), lanes.enter('large', never, 'a')]);
    // a holds its share (2 of 4); its next tasks and b's and c's wait for the 2 free threads.
    const tasks = queue(lanes, order, [
      ['a3', 'large', 'a'],
      ['b1', 'large', 'b'],
      ['c1', 'large', 'c'],
      ['b2', 'large', 'b'],
    ]);
    await settle();
    assert.deepEqual(order, ['b1', 'c1'], 'the two free threads went to b and c; a3 waits for a');
    for (const leave of held) leave!();
    await Promise.all(tasks);
    assert.deepEqual(order, ['b1', 'c1', 'a3', 'b2']);
  });
});
