import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { OPENAPI_PATH, SCHEMA_PATH, openApiText, schemaText } from './sdk-artifacts';

const document = openApiText();
mkdirSync(path.dirname(SCHEMA_PATH), { recursive: true });
writeFileSync(OPENAPI_PATH, document);
writeFileSync(SCHEMA_PATH, await schemaText(document));
console.log(`wrote ${path.relative(process.cwd(), OPENAPI_PATH)} and ${path.relative(process.cwd(), SCHEMA_PATH)}`);
