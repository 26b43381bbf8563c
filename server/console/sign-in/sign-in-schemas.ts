import { z } from 'zod';

export const SignInInputSchema = z.object({ console_key: z.string().max(200) });

/** The signed-in operator, as the console greets them. */
export const SignedInOperatorSchema = z.object({ name: z.string() });

export const SignedOutSchema = z.object({ signed_out: z.literal(true) });
