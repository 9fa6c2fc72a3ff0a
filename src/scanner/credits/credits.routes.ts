import type { ServiceActor } from '../../auth/actor.ts';
import type { App } from '../../http/app-type.ts';
import { v1Errors } from '../../http/schemas.ts';
import { CreditBalancesSchema } from '../../organization/credits/credits.schemas.ts';
import type { CreditsService } from '../../organization/credits/credits.service.ts';

/** getCreditBalances. */
export function registerCreditsRoutes(app: App, credits: CreditsService): void {
  app.get(
    '/api/scanner/v1/credits',
    {
      schema: {
        operationId: 'getCreditBalances',
        tags: ['credits'],
        summary: 'Credit balances and availability per scan type',
        security: [{ ServiceBearer: [] }, { ServiceApiKey: [] }],
        response: { 200: CreditBalancesSchema, ...v1Errors() },
      },
      config: { auth: { kind: 'service', scope: 'credits:read' } },
    },
    async (request) => credits.getBalancesFor(request.actor as ServiceActor),
  );
}
