import type { Transporter } from 'nodemailer';
import { neverConnected, SendRefusedError } from './send-errors.ts';

/** One e-mail; `messageId` is stable per delivery so that a receiver can recognise it. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  messageId: string;
}

export interface Mailer {
  /** Sends; throws SendRefusedError when the server refused or was not reached. */
  send(message: MailMessage): Promise<void>;
  close(): void;
}

/** A mailer over SMTP (`smtp://user:pass@host:port`, `smtps://…` for implicit TLS). */
export function createSmtpMailer(options: { url: string; from: string; timeoutMs: number }): Mailer {
  // nodemailer loads with the first message: most processes never send one, and start faster.
  let transport: Promise<Transporter> | undefined;
  let opened: Transporter | undefined;
  const transportOf = () =>
    (transport ??= import('nodemailer').then(({ default: nodemailer }) => {
      opened = nodemailer.createTransport(options.url, {
        connectionTimeout: options.timeoutMs,
        greetingTimeout: options.timeoutMs,
        socketTimeout: options.timeoutMs,
      } as never);
      return opened;
    }));
  return {
    async send(message) {
      const smtp = await transportOf();
      try {
        await smtp.sendMail({
          from: options.from,
          to: message.to,
          subject: message.subject,
          text: message.text,
          messageId: message.messageId,
        });
      } catch (err) {
        const e = err as { responseCode?: number; code?: string; message?: string };
        // The server answered with an error code: the message was not accepted.
        if (typeof e.responseCode === 'number') {
          throw new SendRefusedError(
            `SMTP ${e.responseCode}: ${e.message ?? ''}`.trim(),
            e.responseCode >= 500,
          );
        }
        if (neverConnected(err) || e.code === 'ECONNECTION' || e.code === 'EAUTH' || e.code === 'EENVELOPE') {
          throw new SendRefusedError(`SMTP ${e.code ?? 'error'}: ${e.message ?? ''}`.trim(), false);
        }
        throw err;
      }
    },
    close() {
      opened?.close();
    },
  };
}
