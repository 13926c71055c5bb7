/** The authenticated requester, as k8s.io/apiserver's user.Info. */
export interface UserInfo {
  readonly name: string;
  readonly uid: string;
  readonly groups: readonly string[];
  readonly extra: Readonly<Record<string, readonly string[]>>;
}

export const allAuthenticated = 'system:authenticated';
export const anonymousUser: UserInfo = {
  name: 'system:anonymous',
  uid: '',
  groups: ['system:unauthenticated'],
  extra: {},
};

/** group.NewAuthenticatedGroupAdder: every authenticated user is in system:authenticated. */
export function withAuthenticatedGroup(user: UserInfo): UserInfo {
  if (user.groups.includes(allAuthenticated)) return user;
  return { ...user, groups: [...user.groups, allAuthenticated] };
}
