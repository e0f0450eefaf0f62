// Deadlines in time order (a binary heap of keys): the follower's plans whose time to be looked at
// comes, found without walking every followed plan. A key's deadline may move or the key be
// forgotten: every push is kept until its time, so the caller checks each key `due` answers
// against what it holds now; a forgotten plan leaves only its id here until then.
interface Entry {
  readonly at: number;
  readonly key: string;
}

export class Deadlines {
  private readonly heap: Entry[] = [];

  push(key: string, at: number): void {
    this.heap.push({ at, key });
    let i = this.heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.heap[parent]!.at <= this.heap[i]!.at) break;
      this.swap(parent, i);
      i = parent;
    }
  }

  /** Takes out the entries at or before `nowMs`: their keys with the deadline each was pushed with. */
  due(nowMs: number): Entry[] {
    const due: Entry[] = [];
    while (this.heap.length > 0 && this.heap[0]!.at <= nowMs) due.push(this.pop());
    return due;
  }

  clear(): void {
    this.heap.length = 0;
  }

  private pop(): Entry {
    const top = this.heap[0]!;
    const last = this.heap.pop()!;
    if (this.heap.length === 0) return top;
    this.heap[0] = last;
    for (let i = 0; ; ) {
      const left = 2 * i + 1;
      let least = i;
      if (left < this.heap.length && this.heap[left]!.at < this.heap[least]!.at) least = left;
      if (left + 1 < this.heap.length && this.heap[left + 1]!.at < this.heap[least]!.at) least = left + 1;
      if (least === i) return top;
      this.swap(least, i);
      i = least;
    }
  }

  private swap(a: number, b: number): void {
    [this.heap[a], this.heap[b]] = [this.heap[b]!, this.heap[a]!];
  }
}
