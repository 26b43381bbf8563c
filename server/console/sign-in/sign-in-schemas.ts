import { z } from 'zod';

/** The signed-in operator, as the console greets them. */
export const SignedInOperatorSchema = z.object({ name: z.string() });
