/** What an account may do beyond its own resources: `operator` opens the operator console and its API. */
export const accountRoles = ['user', 'operator'] as const;
export type AccountRole = (typeof accountRoles)[number];

const roleNames: ReadonlySet<string> = new Set(accountRoles);
export function isAccountRole(value: string): value is AccountRole {
  return roleNames.has(value);
}
