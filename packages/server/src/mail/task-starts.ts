// When a task given to one of our worker pools (parse.ts, auth.ts) starts. Its budget
// counts from then, not while it waits for a thread. piscina posts a task to a free
// thread at once, so a task given while the pool has room and its threads are known to
// run starts now, and its budget with it; only one that may wait asks its thread to say
// when it starts it. That message, one per task, cost the server's thread about a
// twentieth of a delivery (docs/decisions.md "Parsing").
export interface TaskStarts {
  /** Whether a task given now may wait for a thread (then its thread must announce the start). */
  mayWait(): boolean;
  /** Counts a task given to the pool; call the answer once when the task has settled. */
  given(): () => void;
  /** The threads are known to run: a task of theirs started or came back. */
  running(): void;
  /** A thread was ended or died: the next one loads its modules before it can start anything. */
  cold(): void;
}

/** `capacity`: the tasks the pool runs at once (threads times tasks per thread). */
export function createTaskStarts(capacity: number): TaskStarts {
  // piscina frees a thread before the task's promise settles here, so this never counts
  // fewer tasks in the pool than piscina does.
  let outstanding = 0;
  let warm = false;
  return {
    mayWait: () => outstanding >= capacity || !warm,
    given() {
      outstanding++;
      return () => {
        outstanding--;
      };
    },
    running() {
      warm = true;
    },
    cold() {
      warm = false;
    },
  };
}
