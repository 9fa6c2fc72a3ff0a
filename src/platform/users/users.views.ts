import type { companyMembers, users } from '../../db/schema/index.ts';
import type { AuditorPublicProfile, CompanyUser, ShortUserSummary } from './users.schemas.ts';

type UserRow = typeof users.$inferSelect;
type MemberRow = typeof companyMembers.$inferSelect;

/** The short user summary of a user row. */
export function toShortUserSummary(
  user: Pick<UserRow, 'id' | 'name' | 'username' | 'avatar' | 'disabledAt'>,
): ShortUserSummary {
  return {
    userId: user.id,
    name: user.name,
    username: user.username,
    avatar: user.avatar,
    disabledAt: user.disabledAt?.toISOString() ?? null,
  };
}

/**
 * A company user: the user and their membership. `disabledAt` is when the membership was
 * disabled, else when the whole account was.
 */
export function toCompanyUser(user: UserRow, member: MemberRow): CompanyUser {
  return {
    userId: user.id,
    name: user.name,
    username: user.username,
    email: user.email,
    isActivated: user.isActivated,
    createdAt: user.createdAt.toISOString(),
    isBot: user.isBot,
    companyId: member.companyId,
    avatar: user.avatar,
    isGeneratedAvatar: user.isGeneratedAvatar,
    chat_a: user.chatA,
    chat_b: user.chatB,
    timezone: user.timezone,
    disabledAt: (member.disabledAt ?? user.disabledAt)?.toISOString() ?? null,
    companyRole: member.role,
    invitedAt: member.invitedAt.toISOString(),
    joinedAt: member.joinedAt?.toISOString() ?? null,
    deletedAt: user.deletedAt?.toISOString() ?? null,
  };
}

/**
 * A company user of the company user list (timestamps already formatted by the query), by the
 * same rule as {@link toCompanyUser}.
 */
export function toListedCompanyUser(
  row: Omit<CompanyUser, 'disabledAt'> & { memberDisabledAt: string | null; userDisabledAt: string | null },
): CompanyUser {
  // Field by field: a rest-and-spread copy of each row was a visible share of the list's CPU.
  return {
    userId: row.userId,
    name: row.name,
    username: row.username,
    email: row.email,
    isActivated: row.isActivated,
    createdAt: row.createdAt,
    isBot: row.isBot,
    companyId: row.companyId,
    avatar: row.avatar,
    isGeneratedAvatar: row.isGeneratedAvatar,
    chat_a: row.chat_a,
    chat_b: row.chat_b,
    timezone: row.timezone,
    disabledAt: row.memberDisabledAt ?? row.userDisabledAt,
    companyRole: row.companyRole,
    invitedAt: row.invitedAt,
    joinedAt: row.joinedAt,
    deletedAt: row.deletedAt,
  };
}

/** The auditor public profile of a user row. */
export function toAuditorPublicProfile(user: UserRow): AuditorPublicProfile {
  return {
    id: user.id,
    name: user.name,
    username: user.username,
    avatar: user.avatar,
    isBot: user.isBot,
    verifiedProfile: user.verifiedProfile,
    isNdaSigned: user.isNdaSigned,
    reputation: user.reputation,
    skills: user.skills,
    badges: user.badges,
    createdAt: user.createdAt.toISOString(),
    sourcehost: user.sourcehost,
    microblog: user.microblog,
    tagline: user.tagline,
    bio: user.bio,
    website: user.website,
    guildAffiliation: user.guildId,
  };
}
