// Index segments built in parallel: while the archive's thread extracts the next documents,
// helper workers (the same ones that read logs, see readers.js) tokenize and write the
// postings of earlier ones, the bulk of a build. The archive hands a job to a helper only when
// one is free, and indexes everything else itself; a segment a helper returns is adopted only
// if it answers its job exactly, and a job whose helper failed is built by the archive.

/** Events a build must have left before helpers are worth starting (their start costs ~0.1 s). */
export const PARALLEL_INDEX_EVENTS = 10_000;
/** Helpers a build starts at most. */
const MAX_BUILDERS = 4;
/** Jobs a helper holds at once: one to build, one waiting for it while this thread is busy. */
const JOBS_PER_HELPER = 2;

/** How many helpers a build with `eventsLeft` events to index starts: `requested`, or one less than the cores. */
export function builderCount(requested, eventsLeft, cores) {
  if (requested !== undefined) return requested;
  if (eventsLeft < PARALLEL_INDEX_EVENTS) return 0;
  return Math.max(0, Math.min(MAX_BUILDERS, (cores || 1) - 1));
}

/** Helpers building the segments of one index build. */
export class SegmentBuilders {
  #helpers;
  #held;
  #built = [];
  #failed = false;
  #wake = null;
  #answer = null;

  /** `helpers`: objects with `build(job)` resolving to a segment or null (see `helperOver`). */
  constructor(helpers) {
    this.#helpers = helpers;
    this.#held = new Map(helpers.map((helper) => [helper, 0]));
  }

  /** How many more jobs the helpers would take now. */
  slots() {
    if (this.#failed) return 0;
    let free = 0;
    for (const held of this.#held.values()) free += JOBS_PER_HELPER - held;
    return free;
  }

  /** Jobs sent and not yet answered. */
  outstanding() {
    let held = 0;
    for (const count of this.#held.values()) held += count;
    return held;
  }

  /** Whether a helper failed: the archive then takes its jobs back and builds alone. */
  failed() {
    return this.#failed;
  }

  /** Sends `job` to the least busy helper. */
  send(job) {
    let helper = this.#helpers[0];
    for (const candidate of this.#helpers) if (this.#held.get(candidate) < this.#held.get(helper)) helper = candidate;
    this.#held.set(helper, this.#held.get(helper) + 1);
    Promise.resolve()
      .then(() => helper.build(job))
      .catch(() => null)
      .then((segment) => {
        this.#held.set(helper, this.#held.get(helper) - 1);
        if (segment === null) this.#failed = true;
        else this.#built.push(segment);
        this.#wake?.();
      });
  }

  /** The segments built since the last call, to supply to the archive. */
  takeBuilt() {
    return this.#built.splice(0);
  }

  /** Resolves once a helper answers (at once if an answer is already waiting). */
  answered() {
    if (this.#built.length > 0 || this.#failed || this.outstanding() === 0) return Promise.resolve();
    // One pending wait, shared by callers that gave up on it (a build reporting while it waits).
    this.#answer ??= new Promise((resolve) => {
      this.#wake = () => {
        this.#wake = null;
        this.#answer = null;
        resolve();
      };
    });
    return this.#answer;
  }

  close() {
    for (const helper of this.#helpers) helper.close();
    this.#wake?.();
  }
}
