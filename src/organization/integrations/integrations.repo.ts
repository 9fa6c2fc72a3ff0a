import { and, asc, eq } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { integrations } from '../../db/schema/index.ts';
import type { IntegrationSettings } from '../../integrations/settings.ts';

export type IntegrationRow = typeof integrations.$inferSelect;
type Provider = IntegrationRow['provider'];

/** SQL of company integrations (connections to trackers and the sourcehost). */
export function integrationsRepo(db: Db) {
  return {
    /** True when the company has a connection of (provider, site). */
    async exists(companyId: string, provider: Provider, site: string): Promise<boolean> {
      const [row] = await db
        .select({ id: integrations.id })
        .from(integrations)
        .where(
          and(
            eq(integrations.companyId, companyId),
            eq(integrations.provider, provider),
            eq(integrations.site, site),
          ),
        );
      return row !== undefined;
    },

    /** Creates the connection of (provider, site), or replaces its credentials and settings. */
    async upsert(values: {
      companyId: string;
      provider: Provider;
      site: string;
      credentialsEnc: string;
      settings: IntegrationSettings;
      createdBy: string;
    }): Promise<IntegrationRow> {
      const [row] = await db
        .insert(integrations)
        .values(values)
        .onConflictDoUpdate({
          target: [integrations.companyId, integrations.provider, integrations.site],
          set: { credentialsEnc: values.credentialsEnc, settings: values.settings, updatedAt: new Date() },
        })
        .returning();
      return row!;
    },

    /** The company's connections, by provider and site (of one provider when given). */
    async listByCompany(companyId: string, provider?: Provider): Promise<IntegrationRow[]> {
      const conditions = [eq(integrations.companyId, companyId)];
      if (provider !== undefined) conditions.push(eq(integrations.provider, provider));
      return db
        .select()
        .from(integrations)
        .where(and(...conditions))
        .orderBy(asc(integrations.provider), asc(integrations.site));
    },

    /** Deletes one site of a provider, or every connection of it when no site is given. */
    async delete(companyId: string, provider: Provider, site?: string): Promise<IntegrationRow[]> {
      const conditions = [eq(integrations.companyId, companyId), eq(integrations.provider, provider)];
      if (site !== undefined) conditions.push(eq(integrations.site, site));
      return db
        .delete(integrations)
        .where(and(...conditions))
        .returning();
    },
  };
}
