package httpapi_test

import (
	"os"
	"testing"

	"github.com/gin-gonic/gin"
)

func TestMain(m *testing.M) {
	gin.SetMode(gin.TestMode) // tests only; main sets the mode in production
	os.Exit(m.Run())
}
