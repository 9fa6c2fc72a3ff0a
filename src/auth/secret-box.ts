import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

const VERSION = 'v1';

/** Encrypts and decrypts integration secrets with AES-256-GCM under one 32-byte key. */
export interface SecretBox {
  seal(plaintext: string): string;
  open(sealed: string): string;
  /** HMAC-SHA256 with a key derived from the same secret (for signed URLs). */
  sign(message: string): string;
}

/** Builds a SecretBox; `key` must be 32 bytes. */
export function createSecretBox(key: Buffer): SecretBox {
  if (key.length !== 32) throw new Error('The secret key must be 32 bytes.');
  const encKey = createHmac('sha256', key).update('vigil:encryption').digest();
  const macKey = createHmac('sha256', key).update('vigil:signing').digest();
  return {
    seal(plaintext) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', encKey, iv);
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      const tag = cipher.getAuthTag();
      return [VERSION, iv.toString('base64'), tag.toString('base64'), body.toString('base64')].join('.');
    },
    open(sealed) {
      const [version, iv, tag, body] = sealed.split('.');
      if (version !== VERSION || !iv || !tag || body === undefined) throw new Error('Unknown secret format.');
      const decipher = createDecipheriv('aes-256-gcm', encKey, Buffer.from(iv, 'base64'));
      decipher.setAuthTag(Buffer.from(tag, 'base64'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]).toString('utf8');
    },
    sign(message) {
      return createHmac('sha256', macKey).update(message).digest('base64url');
    },
  };
}
