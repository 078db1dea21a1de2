/**
 * The one size-capped body reader, for requests Hangar serves and answers it fetches: it
 * stops reading at the first chunk past the cap, so a peer cannot make Hangar buffer more.
 */
/** A body went past its cap; the caller turns it into its own error (413, a refused source…). */
export class BodyTooLarge extends Error {
    limit;
    name = 'BodyTooLarge';
    constructor(limit) {
        super(`body larger than ${limit} bytes`);
        this.limit = limit;
    }
}
/** Reads a body of at most `limit` bytes; `onChunk` runs on every chunk (to refresh an inactivity timer). */
export async function readCapped(body, limit, onChunk) {
    const chunks = [];
    let size = 0;
    for await (const chunk of body) {
        onChunk?.();
        size += chunk.byteLength;
        if (size > limit)
            throw new BodyTooLarge(limit);
        chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
    }
    return Buffer.concat(chunks);
}
//# sourceMappingURL=body.js.map