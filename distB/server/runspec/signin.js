/**
 * How the services start a sign-in on a remote workload's proxy: `POST SIGNIN_PATH` on the
 * proxy's port with `Authorization: Bearer <stats_token>` (the token in the proxy's record, a
 * file only the user can read) and a JSON body `{ device?, wait_ms? }`; the proxy answers with
 * the sign-in's state: the URL to open or the device code to enter, or `signed_in`.
 */
import { z } from 'zod';
import { WorkloadSignInResult } from '../../protocol/protocol.workloads.js';
export const SIGNIN_PATH = '/hangar/signin';
export const SignInRequest = z.object({ device: z.boolean().optional(), wait_ms: z.number().int().min(0).optional() });
export const SignInAnswer = WorkloadSignInResult.omit({ name: true });
//# sourceMappingURL=signin.js.map