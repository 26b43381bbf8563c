/** One page of a list: newest first; `next_cursor` is `""` on the last page. */
export interface Page<T> {
  data: T[];
  next_cursor: string;
}

/**
 * What a list method returns: await it for the first page, or iterate it with
 * `for await` to walk every item of every page, fetched as the loop needs them.
 */
export class PagePromise<T> implements PromiseLike<Page<T>>, AsyncIterable<T> {
  private first: Promise<Page<T>> | undefined;

  /** `startCursor`: begin at that page (a `next_cursor` from an earlier page) instead of the first. */
  constructor(
    private readonly fetchPage: (cursor: string | undefined) => Promise<Page<T>>,
    private readonly startCursor?: string,
  ) {}

  private firstPage(): Promise<Page<T>> {
    this.first ??= this.fetchPage(this.startCursor);
    return this.first;
  }

  then<A = Page<T>, B = never>(onFulfilled?: ((page: Page<T>) => A | PromiseLike<A>) | null, onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<A | B> {
    return this.firstPage().then(onFulfilled, onRejected);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    let page = await this.firstPage();
    for (;;) {
      yield* page.data;
      if (page.next_cursor === '') return;
      page = await this.fetchPage(page.next_cursor);
    }
  }

  /** Every item of every page, in one array (mind long lists). */
  async toArray(): Promise<T[]> {
    const items: T[] = [];
    for await (const item of this) items.push(item);
    return items;
  }
}
