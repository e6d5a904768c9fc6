# The API and worker image for docker-compose.yml (production).
# A build stage with the development packages compiles the platform into dist/ (scripts/compile.js), builds the
# console (Vite, openapi-typescript) and bundles the workflows, so that workers start without webpack.
# The image itself holds the production packages and that output only: no TypeScript tooling (decision 041).
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund
COPY . .
RUN node scripts/compile.js --force
RUN node dist/scripts/console.js --force
RUN node dist/workers/bundle.js /app/workflow-bundle.js

FROM node:24-bookworm-slim
WORKDIR /app
# openssl makes the Temporal cluster's certificates at first start (the migrate job).
RUN apt-get update && apt-get install -y --no-install-recommends openssl && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production
# Inside a container the API listens on every interface; the compose file decides what is published.
ENV API_HOST=0.0.0.0
COPY package.json package-lock.json ./
# Development-only packages (embedded PostgreSQL, the Temporal test server, pino-pretty, tsx) stay out.
RUN npm ci --omit=dev --no-audit --no-fund
COPY --from=build /app/dist ./dist
COPY --from=build /app/console/dist ./console/dist
COPY --from=build /app/workflow-bundle.js ./workflow-bundle.js
# The one file besides the compiled code that the platform runs: the JRE base image's build.
COPY adapters/deploy/build-jre-image.sh ./adapters/deploy/build-jre-image.sh
ENV WORKFLOW_BUNDLE_PATH=/app/workflow-bundle.js
# The mount points of the data, edge and Temporal volumes (identity, admin, tls, public), owned by the user the API
# and the migrate job run as: a named volume takes
# the ownership of its mount point in the image when it is first created.
RUN mkdir -p /data /edge /identity /temporal-admin /temporal-tls /temporal-public && chown node:node /data /edge /identity /temporal-admin /temporal-tls /temporal-public
USER node
CMD ["node", "dist/api/server.js"]
