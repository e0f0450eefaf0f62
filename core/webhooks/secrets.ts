// An endpoint's signing secret: `whsec_` and 32 random bytes in base64, as Standard Webhooks name
// one. Shown to the partner once, when it is made; kept only sealed with AES-256-GCM under a key
// derived from IDEMPOTENCY_SECRET (as core/plans/intent-plans.ts seals its records), bound to its
// endpoint, so a reader of the store learns no secret and cannot move one to another endpoint.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const PREFIX = 'whsec_';
const SECRET_BYTES = 32;
const SEALED = 'whsec-sealed/1';

export const newSigningSecret = (): string => `${PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;

export class SecretBox {
  private derived: Buffer | null = null;

  /** `secret`: IDEMPOTENCY_SECRET, or the embedded store's own key when it is unset; asked for when first needed. */
  constructor(private readonly secret: () => string | Buffer) {}

  private get key(): Buffer {
    return (this.derived ??= Buffer.from(hkdfSync('sha256', Buffer.from(this.secret()), Buffer.alloc(0), 'bestex webhook signing secrets', 32)));
  }

  /** `secret` sealed for the endpoint `endpointId` (its authenticated data). */
  seal(endpointId: string, secret: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(endpointId));
    const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return [SEALED, iv.toString('base64url'), body.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
  }

  /** The secret; null for one sealed under another key (IDEMPOTENCY_SECRET changed) or for another endpoint. */
  open(endpointId: string, sealed: string): string | null {
    const [header, iv, body, tag] = sealed.split('.');
    if (header !== SEALED || iv === undefined || body === undefined || tag === undefined) return null;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(endpointId));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      return null;
    }
  }
}
