/**
 * The encrypted store's file format: secrets sealed with AES-256-GCM under a key derived from
 * a password with scrypt.
 *
 * The file is two lines. The first is a JSON header: the KDF and its parameters, the file's
 * random salt, a password check value and the GCM nonce. The second is the base64 of the
 * ciphertext followed by the 16-byte tag. The header line is the GCM's additional data, so
 * changing any byte of the file makes opening it fail.
 *
 * scrypt yields 64 bytes: the first 32 are the AES key, the last 32 key an HMAC whose output is
 * the check value. The check tells a wrong password (check differs) from a damaged file (check
 * matches, tag does not), so each gets its own error.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
/** For passwords a person chose: OWASP's recommendation for scrypt (128 MiB, about a second). */
export const STRONG_KDF = { n: 2 ** 17, r: 8, p: 1 };
/** For generated 256-bit keys, which need no stretching: the lowest cost a file may declare. */
export const LIGHT_KDF = { n: 2 ** 14, r: 8, p: 1 };
const MAX_KDF_MEMORY = 1024 ** 3;
const MAX_PLAINTEXT_BYTES = 32 * 1024 ** 2;
const CHECK_LABEL = 'hangar secrets password check';
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const Base64Bytes = (length) => z
    .string()
    .regex(BASE64)
    .refine((text) => {
    const bytes = Buffer.from(text, 'base64');
    return bytes.length >= length.min && bytes.length <= length.max && bytes.toString('base64') === text;
});
/** Bounds keep a forged header from making scrypt allocate unbounded memory. */
const Header = z.strictObject({
    format: z.literal('hangar-secrets'),
    version: z.literal(1),
    kdf: z
        .strictObject({
        name: z.literal('scrypt'),
        n: z
            .number()
            .int()
            .min(LIGHT_KDF.n)
            .refine((n) => (n & (n - 1)) === 0, 'n must be a power of two'),
        r: z.number().int().min(1).max(32),
        p: z.number().int().min(1).max(16),
        salt: Base64Bytes({ min: 16, max: 64 }),
    })
        .refine((kdf) => scryptMemory(kdf) <= MAX_KDF_MEMORY, 'scrypt parameters need too much memory'),
    check: Base64Bytes({ min: 32, max: 32 }),
    cipher: z.literal('aes-256-gcm'),
    nonce: Base64Bytes({ min: 12, max: 12 }),
});
/** What scrypt allocates for these parameters (Node refuses more than `maxmem`). */
function scryptMemory(params) {
    return 128 * params.n * params.r;
}
const Plaintext = z.strictObject({ secrets: z.record(z.string(), z.string()) });
/** Why a file could not be opened; carries no secret material. */
export class SealedFileError extends Error {
    reason;
    constructor(reason) {
        super(reason);
        this.reason = reason;
    }
}
/**
 * Derivations are remembered: a process reuses one file's salt and password for every read and
 * write. A few entries, so that a stale password tried before the right one does not evict it.
 */
const derivations = new Map();
const REMEMBERED_DERIVATIONS = 4;
function derive(password, kdf) {
    const id = JSON.stringify([password, kdf.salt, kdf.n, kdf.r, kdf.p]);
    const known = derivations.get(id);
    if (known)
        return known;
    const key = new Promise((resolve, reject) => {
        const options = { N: kdf.n, r: kdf.r, p: kdf.p, maxmem: 2 * scryptMemory(kdf) };
        scrypt(password, Buffer.from(kdf.salt, 'base64'), 64, options, (error, bytes) => {
            if (error)
                return reject(error);
            const check = createHmac('sha256', bytes.subarray(32)).update(CHECK_LABEL).digest();
            resolve({ encryption: bytes.subarray(0, 32), check });
        });
    });
    if (derivations.size >= REMEMBERED_DERIVATIONS)
        derivations.delete(derivations.keys().next().value);
    derivations.set(id, key);
    key.catch(() => derivations.delete(id));
    return key;
}
/** A fresh salt with the given cost. */
export function newKeyDerivation(params) {
    return { ...params, salt: randomBytes(16).toString('base64') };
}
/** Seals `secrets` under `password`, keeping `kdf` (the file's salt and parameters). */
export async function seal(secrets, password, kdf) {
    const key = await derive(password, kdf);
    const nonce = randomBytes(12);
    const header = {
        format: 'hangar-secrets',
        version: 1,
        kdf: { name: 'scrypt', n: kdf.n, r: kdf.r, p: kdf.p, salt: kdf.salt },
        check: key.check.toString('base64'),
        cipher: 'aes-256-gcm',
        nonce: nonce.toString('base64'),
    };
    const headerLine = Buffer.from(JSON.stringify(header), 'utf8');
    const plaintext = Buffer.from(JSON.stringify({ secrets: Object.fromEntries(secrets) }), 'utf8');
    if (plaintext.length > MAX_PLAINTEXT_BYTES)
        throw new RangeError('the secrets store may hold at most 32 MiB');
    const cipher = createCipheriv('aes-256-gcm', key.encryption, nonce);
    cipher.setAAD(headerLine);
    const body = Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
    return Buffer.concat([headerLine, Buffer.from(`\n${body.toString('base64')}\n`, 'utf8')]);
}
function parse(file) {
    const text = file.toString('utf8');
    const lines = text.split('\n');
    if (lines.length !== 3 || lines[2] !== '' || !Buffer.from(text, 'utf8').equals(file)) {
        throw new SealedFileError('malformed');
    }
    let raw;
    try {
        raw = JSON.parse(lines[0]);
    }
    catch {
        throw new SealedFileError('malformed');
    }
    const parsed = Header.safeParse(raw);
    if (!parsed.success)
        throw new SealedFileError(isNewerFormat(raw) ? 'too_new' : 'malformed');
    const header = parsed.data;
    const encoded = lines[1];
    const body = Buffer.from(encoded, 'base64');
    if (!BASE64.test(encoded) || body.toString('base64') !== encoded || body.length < 16) {
        throw new SealedFileError('malformed');
    }
    return { header, headerLine: Buffer.from(lines[0], 'utf8'), body };
}
function isNewerFormat(header) {
    const { format, version } = (header ?? {});
    return format === 'hangar-secrets' && typeof version === 'number' && version > 1;
}
/** Opens a sealed file; throws `SealedFileError` when it is malformed, tampered or the password is wrong. */
export async function open(file, password) {
    const { header, headerLine, body } = parse(file);
    const key = await derive(password, header.kdf);
    if (!timingSafeEqual(key.check, Buffer.from(header.check, 'base64')))
        throw new SealedFileError('wrong_password');
    const decipher = createDecipheriv('aes-256-gcm', key.encryption, Buffer.from(header.nonce, 'base64'), {
        authTagLength: 16,
    });
    decipher.setAAD(headerLine);
    decipher.setAuthTag(body.subarray(body.length - 16));
    let plaintext;
    try {
        plaintext = Buffer.concat([decipher.update(body.subarray(0, body.length - 16)), decipher.final()]);
    }
    catch {
        throw new SealedFileError('tampered');
    }
    let secrets;
    try {
        const parsed = JSON.parse(plaintext.toString('utf8'));
        Plaintext.parse(parsed);
        // Entries of the parsed JSON itself: zod's copy assigns keys, and `__proto__` would be lost.
        secrets = parsed.secrets;
    }
    catch {
        throw new SealedFileError('malformed');
    }
    const { n, r, p, salt } = header.kdf;
    return { secrets: new Map(Object.entries(secrets)), kdf: { n, r, p, salt } };
}
//# sourceMappingURL=sealed.js.map