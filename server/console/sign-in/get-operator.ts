import { operatorProcedure } from '../console-procedures';
import { SignedInOperatorSchema } from './sign-in-schemas';

/** Who is signed in; the console's pages ask on load (401 console_sign_in_required: show the sign-in). */
export const getOperatorProcedure = operatorProcedure.output(SignedInOperatorSchema).query(({ ctx }) => ({ name: ctx.operator.name }));
