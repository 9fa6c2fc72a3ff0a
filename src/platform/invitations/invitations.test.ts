import { readFileSync } from 'node:fs';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeSmtpServer, startFakeSmtpServer } from '../../../test/fakes/smtp-server.ts';
import { api, apiOk, createTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { itEnforcesUserAuth } from '../../../test/helpers/auth-cases.ts';
import { buildCompanyWorld, buildUser } from '../../../test/helpers/factories.ts';
import { waitFor } from '../../../test/helpers/wait.ts';
import { companyInvitations, companyMembers, users } from '../../db/schema/index.ts';

let t: TestApp;
let smtp: FakeSmtpServer;

beforeAll(async () => {
  smtp = await startFakeSmtpServer();
  t = await createTestApp({ env: { VIGIL_SMTP_URL: smtp.url }, worker: true });
});
afterAll(async () => {
  await t.close();
  await smtp.close();
});

interface Invitation {
  id: string;
  company: { id: string; name: string; handle: string };
  role: string;
  username: string | null;
  email: string | null;
  name: string | null;
  state: string;
  invitedBy: { userId: string } | null;
  expiresAt: string;
}

interface AuditItem {
  action: string;
  target: { userId: string } | null;
  createdBy: { userId: string } | null;
  details: Record<string, unknown>;
}

const suffix = () => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;

function invite(companyId: string, token: string, body: Record<string, unknown>) {
  return api(t, 'POST', `/api/v0/companies/${companyId}/users`, token, body);
}

async function inviteOk(companyId: string, token: string, body: Record<string, unknown>) {
  const res = await invite(companyId, token, body);
  expect(res.statusCode).toBe(202);
  return res.json() as Invitation;
}

async function auditOf(companyId: string): Promise<AuditItem[]> {
  return (
    await apiOk<{ items: AuditItem[] }>(
      t,
      'GET',
      `/api/v0/companies/${companyId}/audit-log?limit=100`,
      t.adminToken,
    )
  ).items;
}

async function usernamesOf(companyId: string, token: string): Promise<string[]> {
  const { users: list } = await apiOk<{ users: Array<{ username: string }> }>(
    t,
    'GET',
    `/api/v0/companies/${companyId}/users?include_all=true`,
    token,
  );
  return list.map((u) => u.username);
}

/** The text of the one message sent to `to` (quoted-printable soft breaks joined). */
async function mailTo(to: string): Promise<string> {
  const message = await waitFor(() => smtp.messages.find((m) => m.to.includes(to.toLowerCase())), {
    what: `an e-mail to ${to}`,
  });
  return message.raw.replace(/=\r?\n/g, '');
}

/** A user of another company with a full profile: the person whose data must not leak. */
async function acmeUser() {
  const acme = await buildCompanyWorld(t);
  const name = `Dana Whitfield ${suffix()}`;
  const email = `dana.${suffix()}@acme.finance`;
  const dana = await buildUser(t, { companyId: acme.company.id, name, email });
  await apiOk(t, 'PATCH', `/api/v0/users/${dana.id}/profile`, dana.token, { timezone: 'Europe/Dublin' });
  return { ...dana, name, email };
}

describe('POST /api/v0/companies/{company_id}/users (invitation)', () => {
  it('answers a username of another company’s user with only what the inviter gave', async () => {
    const dana = await acmeUser();
    const beta = await buildCompanyWorld(t);
    const res = await invite(beta.company.id, beta.manager.token, { username: dana.username });
    expect(res.statusCode).toBe(202);
    const body = res.json() as Invitation;
    expect(body).toMatchObject({
      username: dana.username,
      email: null,
      name: null,
      state: 'pending',
      role: 'member',
      company: { id: beta.company.id },
      invitedBy: { userId: beta.manager.id },
    });
    for (const secret of [dana.id, dana.email, dana.name, 'Europe/Dublin'])
      expect(res.body).not.toContain(secret);
    // Not a company user before accepting: Beta's members read nothing of her.
    expect(await usernamesOf(beta.company.id, beta.member.token)).not.toContain(dana.username);
  });

  it('answers an e-mail address of another company’s user with only that address', async () => {
    const li = await acmeUser();
    const beta = await buildCompanyWorld(t);
    const res = await invite(beta.company.id, beta.manager.token, { email: li.email });
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({ username: null, email: li.email, name: null });
    for (const secret of [li.id, li.username, li.name]) expect(res.body).not.toContain(secret);
    expect(await usernamesOf(beta.company.id, beta.member.token)).not.toContain(li.username);
  });

  it('answers the same for a name nobody has, and creates no user (the name stays free)', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const dana = await acmeUser();
    const known = (await inviteOk(company.id, manager.token, {
      username: dana.username,
    })) as unknown as Record<string, unknown>;
    const name = `nobody${suffix()}`;
    const unknown = (await inviteOk(company.id, manager.token, { username: name })) as unknown as Record<
      string,
      unknown
    >;
    expect(Object.keys(unknown).sort()).toEqual(Object.keys(known).sort());
    const byEmail = await inviteOk(company.id, manager.token, { email: `${name}@nowhere.example` });
    expect(byEmail.state).toBe('pending');
    const rows = await t.container.database.db
      .select({ id: users.id })
      .from(users)
      .where(sql`lower(${users.username}) like ${`${name.toLowerCase()}%`}`);
    expect(rows).toEqual([]);
    // The platform admin can still create a user of that name.
    expect(
      (await api(t, 'POST', '/api/v0/admin/users', t.adminToken, { username: name, name })).statusCode,
    ).toBe(201);
  });

  it('audits the invitation without a target: the details are what the inviter gave', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const dana = await acmeUser();
    const invitation = await inviteOk(company.id, manager.token, {
      username: dana.username,
      role: 'manager',
    });
    const [entry] = await auditOf(company.id);
    expect(entry).toMatchObject({
      action: 'user_invited',
      target: null,
      createdBy: { userId: manager.id },
      details: { invitationId: invitation.id, username: dana.username, email: null, role: 'manager' },
    });
  });

  it('refuses a company user’s name or address and a second open invitation (409), without an entry', async () => {
    const { company, manager, member } = await buildCompanyWorld(t);
    const before = (await auditOf(company.id)).length;
    expect(
      (await invite(company.id, manager.token, { username: member.username.toUpperCase() })).statusCode,
    ).toBe(409);
    const name = `twice${suffix()}`;
    await inviteOk(company.id, manager.token, { username: name });
    expect((await invite(company.id, manager.token, { username: name })).statusCode).toBe(409);
    const email = `${name}@example.com`;
    await inviteOk(company.id, manager.token, { email });
    expect((await invite(company.id, manager.token, { email: email.toUpperCase() })).statusCode).toBe(409);
    expect((await auditOf(company.id)).length).toBe(before + 2);
  });

  it('answers 400 without a username or an e-mail address, and for a malformed address', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    expect((await invite(company.id, manager.token, { name: 'x' })).statusCode).toBe(400);
    const bad = await invite(company.id, manager.token, { email: 'not-an-email' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().msg).toContain('email');
  });

  it('is for company managers and platform admins: members 403, other companies 404', async () => {
    const { company, member } = await buildCompanyWorld(t);
    const other = await buildCompanyWorld(t);
    const body = { username: `x${suffix()}` };
    expect((await invite(company.id, member.token, body)).statusCode).toBe(403);
    expect((await invite(company.id, other.manager.token, body)).statusCode).toBe(404);
    expect((await invite(company.id, t.adminToken, body)).statusCode).toBe(202);
  });

  itEnforcesUserAuth(() => t, {
    method: 'POST',
    request: async (app, companyId) => {
      const manager = await buildUser(app, { companyId, companyRole: 'manager' });
      return {
        url: `/api/v0/companies/${companyId}/users`,
        payload: { username: `someone${suffix()}` },
        token: manager.token,
      };
    },
  });
});

describe('accepting and declining', () => {
  it('the invited user accepts with their own token, and only then is a company user', async () => {
    const dana = await acmeUser();
    const beta = await buildCompanyWorld(t);
    const invitation = await inviteOk(beta.company.id, beta.manager.token, { username: dana.username });
    const mine = await apiOk<{ invitations: Invitation[] }>(t, 'GET', '/api/v0/invitations', dana.token);
    expect(mine.invitations.map((i) => i.id)).toContain(invitation.id);
    expect(mine.invitations.find((i) => i.id === invitation.id)?.company.name).toBeTruthy();

    const res = await api(t, 'POST', `/api/v0/invitations/${invitation.id}/accept`, dana.token);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      userId: dana.id,
      companyId: beta.company.id,
      companyRole: 'member',
      email: dana.email,
    });
    expect(await usernamesOf(beta.company.id, beta.member.token)).toContain(dana.username);
    const [joined] = await auditOf(beta.company.id);
    expect(joined).toMatchObject({
      action: 'user_auto_joined',
      target: { userId: dana.id },
      createdBy: { userId: dana.id },
      details: { via: 'invitation', invitationId: invitation.id },
    });
    const again = await api(t, 'POST', `/api/v0/invitations/${invitation.id}/accept`, dana.token);
    expect(again.statusCode).toBe(409);
    expect(again.headers['x-error-code']).toBe('INVITATION_NOT_PENDING');
    expect(
      (await apiOk<{ invitations: Invitation[] }>(t, 'GET', '/api/v0/invitations', dana.token)).invitations,
    ).toEqual([]);
  });

  it('nobody else answers it — not the inviter, a platform admin or another user: 404 as for an unknown id', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const invitee = await buildUser(t);
    const other = await buildUser(t);
    const invitation = await inviteOk(company.id, manager.token, { username: invitee.username });
    for (const token of [manager.token, t.adminToken, other.token]) {
      for (const verb of ['accept', 'decline']) {
        expect((await api(t, 'POST', `/api/v0/invitations/${invitation.id}/${verb}`, token)).statusCode).toBe(
          404,
        );
      }
    }
    expect(
      (await api(t, 'POST', `/api/v0/invitations/${crypto.randomUUID()}/accept`, invitee.token)).statusCode,
    ).toBe(404);
    expect((await api(t, 'POST', `/api/v0/invitations/${invitation.id}/accept`, null)).statusCode).toBe(401);
    const listed = await apiOk<{ invitations: Invitation[] }>(
      t,
      'GET',
      `/api/v0/companies/${company.id}/invitations`,
      manager.token,
    );
    expect(listed.invitations.find((i) => i.id === invitation.id)?.state).toBe('pending');
  });

  it('e-mails an invitation by address with a one-time secret; only the secret accepts it', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const email = `new.${suffix()}@partner.example`;
    const invitation = await inviteOk(company.id, manager.token, { email, name: 'New Person' });
    const text = await mailTo(email);
    expect(text).toContain(invitation.id);
    const secret = /vgl_inv_[0-9A-Za-z]{40}/.exec(text)?.[0];
    expect(secret).toBeDefined();
    // Once sent, only the secret's hash is kept. The mail leaves before the job's transaction that
    // forgets the sealed secret commits, so the row is awaited rather than read once.
    const row = await waitFor(
      async () => {
        const [r] = await t.container.database.db
          .select()
          .from(companyInvitations)
          .where(eq(companyInvitations.id, invitation.id));
        return r?.mailedAt ? r : null;
      },
      { what: 'the invitation marked as mailed' },
    );
    expect(row).toMatchObject({ mailSecretSealed: null });
    expect(row!.mailedAt).not.toBeNull();
    expect(JSON.stringify(row)).not.toContain(secret!);

    // An account holding that address is not enough: the mailbox is proven by the secret.
    const claimant = await buildUser(t, { email });
    const url = `/api/v0/invitations/${invitation.id}/accept`;
    expect((await api(t, 'POST', url, claimant.token)).statusCode).toBe(404);
    expect(
      (await api(t, 'POST', url, claimant.token, { secret: `vgl_inv_${'A'.repeat(40)}` })).statusCode,
    ).toBe(404);
    // The person who got the e-mail signs in with an account of their own (made by the platform admin).
    const person = await buildUser(t, { name: 'New Person' });
    const res = await api(t, 'POST', url, person.token, { secret });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ userId: person.id, companyId: company.id });
    expect((await api(t, 'POST', url, claimant.token, { secret })).statusCode).toBe(409);
  });

  it('e-mails an invitation by username to the user’s own address, without a secret', async () => {
    const dana = await acmeUser();
    const beta = await buildCompanyWorld(t);
    const invitation = await inviteOk(beta.company.id, beta.manager.token, { username: dana.username });
    const text = await mailTo(dana.email);
    expect(text).toContain(invitation.id);
    expect(text).toContain(beta.company.name);
    expect(text).not.toMatch(/vgl_inv_/);
  });

  it('with a username and an address, e-mails the address without a secret: only the named user accepts', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const named = await buildUser(t);
    const holder = await buildUser(t);
    const email = `both.${suffix()}@partner.example`;
    const invitation = await inviteOk(company.id, manager.token, { username: named.username, email });
    const text = await mailTo(email);
    expect(text).toContain(invitation.id);
    expect(text).not.toMatch(/vgl_inv_/);
    expect(
      (await api(t, 'POST', `/api/v0/invitations/${invitation.id}/accept`, holder.token)).statusCode,
    ).toBe(404);
    expect(
      (await api(t, 'POST', `/api/v0/invitations/${invitation.id}/accept`, named.token)).statusCode,
    ).toBe(200);
  });

  it('an address the mail server refuses: the failure is kept, the secret forgotten, nothing resent', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const email = `refused.${suffix()}@partner.example`;
    smtp.refuse.add(email);
    const invitation = await inviteOk(company.id, manager.token, { email });
    const row = await waitFor(
      async () =>
        (
          await t.container.database.db
            .select()
            .from(companyInvitations)
            .where(eq(companyInvitations.id, invitation.id))
        ).find((r) => r.mailError !== null),
      { what: 'the refused invitation e-mail recorded' },
    );
    expect(row.mailError).toContain('550');
    expect(row.mailSecretSealed).toBeNull();
    expect(row.mailedAt).toBeNull();
    expect(await t.container.services.invitations.mailInvitation(invitation.id)).toBe('skipped');
    expect(smtp.messages.some((m) => m.to.includes(email))).toBe(false);
  });

  it('a declined invitation is closed, audited without naming the user', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const invitee = await buildUser(t);
    const invitation = await inviteOk(company.id, manager.token, { username: invitee.username });
    const res = await api(t, 'POST', `/api/v0/invitations/${invitation.id}/decline`, invitee.token);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: invitation.id, state: 'declined' });
    expect(
      (await api(t, 'POST', `/api/v0/invitations/${invitation.id}/accept`, invitee.token)).statusCode,
    ).toBe(409);
    const [entry] = await auditOf(company.id);
    expect(entry).toMatchObject({
      action: 'invitation_declined',
      target: null,
      createdBy: null,
      details: { invitationId: invitation.id, username: invitee.username },
    });
    expect(await usernamesOf(company.id, manager.token)).not.toContain(invitee.username);
  });

  it('an expired invitation takes no answer and no longer holds the name', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const invitee = await buildUser(t);
    const invitation = await inviteOk(company.id, manager.token, { username: invitee.username });
    await t.container.database.db
      .update(companyInvitations)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(companyInvitations.id, invitation.id));
    const res = await api(t, 'POST', `/api/v0/invitations/${invitation.id}/accept`, invitee.token);
    expect(res.statusCode).toBe(409);
    expect(res.json().msg).toContain('expired');
    const expired = await apiOk<{ invitations: Invitation[] }>(
      t,
      'GET',
      `/api/v0/companies/${company.id}/invitations?state=expired`,
      manager.token,
    );
    expect(expired.invitations.map((i) => i.id)).toEqual([invitation.id]);
    const again = await inviteOk(company.id, manager.token, { username: invitee.username });
    expect((await api(t, 'POST', `/api/v0/invitations/${again.id}/accept`, invitee.token)).statusCode).toBe(
      200,
    );
  });
});

describe('company invitations: list and revoke', () => {
  it('managers list and revoke; a revoked invitation cannot be accepted; revoking again changes nothing', async () => {
    const { company, manager, member } = await buildCompanyWorld(t);
    const invitee = await buildUser(t);
    const invitation = await inviteOk(company.id, manager.token, { username: invitee.username });
    const listUrl = `/api/v0/companies/${company.id}/invitations`;
    expect((await api(t, 'GET', listUrl, member.token)).statusCode).toBe(403);
    const listed = await apiOk<{ invitations: Invitation[] }>(
      t,
      'GET',
      `${listUrl}?state=pending`,
      manager.token,
    );
    expect(listed.invitations.map((i) => i.id)).toEqual([invitation.id]);

    const revokeUrl = `/api/v0/companies/${company.id}/invitations/${invitation.id}/revoke`;
    expect((await api(t, 'POST', revokeUrl, member.token)).statusCode).toBe(403);
    const other = await buildCompanyWorld(t);
    expect((await api(t, 'POST', revokeUrl, other.manager.token)).statusCode).toBe(404);
    // Another company's invitation id under one's own company: 404.
    expect(
      (
        await api(
          t,
          'POST',
          `/api/v0/companies/${other.company.id}/invitations/${invitation.id}/revoke`,
          other.manager.token,
        )
      ).statusCode,
    ).toBe(404);
    const revoked = await api(t, 'POST', revokeUrl, manager.token);
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json()).toMatchObject({ state: 'revoked' });
    expect((await api(t, 'POST', revokeUrl, manager.token)).statusCode).toBe(200);
    expect(
      (await api(t, 'POST', `/api/v0/invitations/${invitation.id}/accept`, invitee.token)).statusCode,
    ).toBe(409);
    const entries = (await auditOf(company.id)).filter((e) => e.action === 'invitation_revoked');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ target: null, createdBy: { userId: manager.id } });
  });

  itEnforcesUserAuth(() => t, {
    method: 'GET',
    request: async (app, companyId) => {
      const manager = await buildUser(app, { companyId, companyRole: 'manager' });
      return { url: `/api/v0/companies/${companyId}/invitations`, token: manager.token };
    },
  });
});

describe('migration 0031', () => {
  it('turns a membership never joined into a pending invitation for the user’s name, which they accept', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const invitee = await buildUser(t);
    const db = t.container.database.db;
    // A membership as the former invitation path left it: no joinedAt.
    await db
      .insert(companyMembers)
      .values({ companyId: company.id, userId: invitee.id, role: 'manager', joinedAt: null });
    const migration = readFileSync(
      new URL('../../db/migrations/0031_company_invitations.sql', import.meta.url),
      'utf8',
    );
    const dataSteps = migration
      .split('--> statement-breakpoint')
      .filter((step) => /INSERT INTO "company_invitations"|DELETE FROM "company_members"/.test(step));
    expect(dataSteps).toHaveLength(2);
    for (const step of dataSteps) await t.container.database.executeSql(step);
    await t.settleCredentials();

    expect(await usernamesOf(company.id, manager.token)).not.toContain(invitee.username);
    const listed = await apiOk<{ invitations: Invitation[] }>(
      t,
      'GET',
      `/api/v0/companies/${company.id}/invitations`,
      manager.token,
    );
    expect(listed.invitations).toHaveLength(1);
    expect(listed.invitations[0]).toMatchObject({
      username: invitee.username,
      role: 'manager',
      state: 'pending',
    });
    const res = await api(
      t,
      'POST',
      `/api/v0/invitations/${listed.invitations[0]!.id}/accept`,
      invitee.token,
    );
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ userId: invitee.id, companyRole: 'manager' });
  });
});
