/**
 * The one check of every URL a tenant can set that the service will connect to (the
 * notification webhook, tracker and sourcehost endpoints, and any setting added later): an
 * http(s) URL whose destination the outbound policy allows. Every such setting is checked by
 * {@link checkTenantUrl} when it is saved; every connection to it is checked again by the policy
 * when it is opened (the address may have changed since).
 */
import { AppError } from '../../errors.ts';
import { isOutboundRefused, type OutboundPolicy, OutboundRefusedError } from './outbound-policy.ts';

/** What the check needs of the outbound policy. */
export type TenantUrlChecker = Pick<OutboundPolicy, 'checkUrl'>;

/**
 * Checks one tenant URL setting; throws `VALIDATION_FAILED` (400) naming the setting (`field`,
 * e.g. `url`, `settings.baseUrl`) when it is not an http(s) URL or its destination is refused.
 * The refusal reads the same whatever lies behind the address. A name that does not resolve now
 * (DNS down, a host not created yet) is kept: the connection is checked when it is opened.
 */
export async function checkTenantUrl(
  outbound: TenantUrlChecker,
  field: string,
  value: string,
): Promise<void> {
  if (!/^https?:\/\//i.test(value) || !URL.canParse(value)) {
    throw new AppError('VALIDATION_FAILED', {
      message: `${field} must be an http(s) URL.`,
      details: { field },
    });
  }
  try {
    await outbound.checkUrl(value);
  } catch (err) {
    if (!isOutboundRefused(err)) throw err;
    if (err instanceof OutboundRefusedError && err.reason === 'unresolvable') return;
    throw new AppError('VALIDATION_FAILED', {
      message: `${field}: ${(err as Error).message}`,
      details: { field },
    });
  }
}

/** Checks each `[field, value]` setting in order with {@link checkTenantUrl}; absent values are skipped. */
export async function checkTenantUrls(
  outbound: TenantUrlChecker,
  settings: ReadonlyArray<readonly [field: string, value: string | undefined]>,
): Promise<void> {
  for (const [field, value] of settings) {
    if (value !== undefined) await checkTenantUrl(outbound, field, value);
  }
}
