// Ed25519 through WebCrypto, as the SDK's own wallets sign: a transaction hash's bytes (as
// Canton's signTransactionHash does) or a message's UTF-8 bytes (as Canton's signMessage does),
// keys and signatures in base64, a public key as its raw 32 bytes. WebCrypto, not a Node module:
// the same code runs in a browser, and nothing is touched before the first key is asked for, so
// importing this under server-side rendering does nothing.

export const fromBase64 = (text: string): Uint8Array<ArrayBuffer> => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
export const toBase64 = (bytes: Uint8Array): string => btoa(Array.from(bytes, (b) => String.fromCharCode(b)).join(''));

/** PKCS#8 framing of a raw Ed25519 seed (RFC 8410), which is how WebCrypto takes a private key. */
const PKCS8_ED25519 = [0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20];

export interface Ed25519Signer {
  /** The raw 32-byte public key, base64. */
  readonly publicKey: string;
  /** Signs the bytes `base64` encodes (a transaction hash); the signature in base64. */
  signBytes(base64: string): Promise<string>;
  /** Signs the UTF-8 bytes of `message`; the signature in base64. */
  signMessage(message: string): Promise<string>;
}

function signerOf(key: Promise<CryptoKey>, publicKey: string): Ed25519Signer {
  // Reported when signing, as the signer's failure, not as an unhandled rejection now.
  key.catch(() => undefined);
  const sign = async (bytes: Uint8Array<ArrayBuffer>) => toBase64(new Uint8Array(await crypto.subtle.sign({ name: 'Ed25519' }, await key, bytes)));
  return { publicKey, signBytes: (base64) => sign(fromBase64(base64)), signMessage: (message) => sign(new TextEncoder().encode(message)) };
}

/** A signer over an Ed25519 secret key as `sdk.keys.generate()` and Canton's createKeyPair give it: base64 of 64 bytes (seed, then public key). */
export function keySigner(privateKey: string): Ed25519Signer {
  let secret: Uint8Array<ArrayBuffer>;
  try {
    secret = fromBase64(privateKey);
  } catch {
    secret = new Uint8Array();
  }
  if (secret.length !== 64) throw new TypeError('signer.privateKey must be an Ed25519 secret key as sdk.keys.generate() gives it: base64 of 64 bytes');
  const key = crypto.subtle.importKey('pkcs8', new Uint8Array([...PKCS8_ED25519, ...secret.subarray(0, 32)]), { name: 'Ed25519' }, false, ['sign']);
  return signerOf(key, toBase64(secret.subarray(32)));
}

/** A new key, its private half never extractable: a wallet's key for its session. */
export async function sessionSigner(): Promise<Ed25519Signer> {
  const pair = (await crypto.subtle.generateKey({ name: 'Ed25519' }, false, ['sign', 'verify'])) as CryptoKeyPair;
  const raw = new Uint8Array(await crypto.subtle.exportKey('raw', pair.publicKey));
  return signerOf(Promise.resolve(pair.privateKey), toBase64(raw));
}
