#!/bin/sh
# The baseline beneath a JAR deploy, as an operator's shell script would do it by hand on the same engine:
# build an image of the JAR on the same base image with a Dockerfile that makes what the platform's image
# holds (the JAR, its user, folder, entry point and a label; decision 032 says how the platform makes it),
# run one container, and poll it every 100 ms (as bench/deploy polls the edge) until it answers 200.
# Usage: deploy-baseline.sh <jar> <base image> <name> <scope label>
set -eu
jar=$1
base=$2
name=$3
scope=$4
context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
cp "$jar" "$context/app.jar"
cat >"$context/Dockerfile" <<DOCKERFILE
FROM $base
COPY app.jar /app/app.jar
USER 65534:65534
WORKDIR /app
ENTRYPOINT ["java", "-jar", "/app/app.jar"]
DOCKERFILE
docker build -q --label "opsflow.scope=$scope" -t "$name" "$context" >/dev/null
docker run -d --name "$name" --label "opsflow.scope=$scope" "$name" >/dev/null
address=$(docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$name")
until curl -sf -o /dev/null "http://$address:8080/x"; do sleep 0.1; done
