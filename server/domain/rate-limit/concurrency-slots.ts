/**
 * At most `perOwner` things open at once per owner (event streams per API key, live-view
 * sockets per session), counted in this process. A claim is given back exactly once,
 * however many times its release is called.
 */
export class ConcurrencySlots {
  private readonly held = new Map<string, number>();

  constructor(private readonly perOwner: number) {}

  /** Takes one of the owner's slots: the function that gives it back, or null when all are taken. */
  claim(owner: string): (() => void) | null {
    const count = this.held.get(owner) ?? 0;
    if (count >= this.perOwner) return null;
    this.held.set(owner, count + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.held.get(owner) ?? 1) - 1;
      if (left === 0) this.held.delete(owner);
      else this.held.set(owner, left);
    };
  }
}
